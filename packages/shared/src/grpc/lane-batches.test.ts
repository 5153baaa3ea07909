// Batches: the messages one end of a lane sends in one turn of its event loop cross as one message, each caller
// still with its own answer; a batch stays under a MiB.
import { waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { ask, clearWire, laneClient, startLaneServer, stopAll, text, wire } from './lane-test-kit.ts';

afterEach(stopAll);

describe('batches on lanes', () => {
  /** A server whose handler answers every call at once when `release` is called (the answers of one turn). */
  async function gatedServer() {
    let open!: () => void;
    let gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const server = await startLaneServer({
      calls: {
        Echo: async (json) => {
          await gate;
          return { text: text(json).text };
        },
      },
    });
    return {
      ...server,
      release: () => {
        open();
        gate = new Promise<void>((resolve) => {
          open = resolve;
        });
      },
    };
  }

  /** A gated server and a client whose lane is open (its first call answered); the wire is counted from there. */
  async function openLane() {
    const server = await gatedServer();
    const client = laneClient(server.address);
    const first = client.call('Echo', ask({ text: 'first' }), { deadlineMs: 5_000 });
    await waitFor(() => wire.requests.length === 1, { timeoutMs: 2_000, what: 'the first call' });
    server.release();
    await expect(first).resolves.toEqual({ text: 'first' });
    clearWire();
    return { client, release: server.release };
  }

  /** Waits until the server has taken `count` calls, however they were batched. */
  const taken = (count: number) =>
    waitFor(() => wire.requests.reduce((sum, n) => sum + n, 0) === count, {
      timeoutMs: 2_000,
      what: `the ${count} calls on the server`,
    });

  it('send the calls of one turn as one message, and their replies as one, each caller with its own answer', async () => {
    const { client, release } = await openLane();
    const calls = Array.from({ length: 30 }, (_, index) =>
      client.call('Echo', ask({ text: `n${index}` }), { deadlineMs: 5_000 }),
    );
    await taken(30);
    release();
    expect(await Promise.all(calls)).toEqual(
      Array.from({ length: 30 }, (_, index) => ({ text: `n${index}` })),
    );
    expect(wire.requests).toEqual([30]);
    expect(wire.replies).toEqual([30]);
  });

  it('keep a batch under a MiB: calls larger together go in more than one message, in order', async () => {
    const { client, release } = await openLane();
    const big = (index: number) => `${index}`.padEnd(300 * 1024, 'x');
    const calls = Array.from({ length: 5 }, (_, index) =>
      client.call('Echo', ask({ text: big(index) }), { deadlineMs: 5_000 }),
    );
    await taken(5);
    release();
    expect((await Promise.all(calls)).map((answer) => answer.text)).toEqual([0, 1, 2, 3, 4].map(big));
    // 300 KiB each: three fit in a MiB, the fourth starts the next message.
    expect(wire.requests).toEqual([3, 2]);
  });
});
