// Streaming calls on lanes: many streams share a lane, each with its chunks in order and its own credit, so a
// slow reader holds back only its own; a stream rides the lane from the lane's first message; errors, early
// exits and drains reach it as they reach a call answered once.
import type { Client } from '@grpc/grpc-js';
import { waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import type { LaneClient } from './lane-client.ts';
import type { LaneMethods } from './lane-server.ts';
import {
  type Answer,
  ask,
  type Chunk,
  laneClient,
  pause,
  startLaneServer,
  stopAll,
  text,
} from './lane-test-kit.ts';

/** The chunks each stream's server side made, by its text, and the streams whose server side ended. */
type StreamLog = { produced: Map<string, number>; closed: string[] };
const newLog = (): StreamLog => ({ produced: new Map(), closed: [] });

afterEach(stopAll);

/** A streaming method whose request names how many chunks to send, and after which one to fail. */
function countingStreams(log: StreamLog): LaneMethods<Answer, Chunk> {
  return {
    calls: { Echo: async (json) => ({ text: text(json).text }) },
    streams: {
      Count: async function* (json, { signal }) {
        const request = JSON.parse(json.toString('utf8')) as { text: string; count: number; failAt?: number };
        try {
          for (let n = 0; n < request.count; n++) {
            if (signal.aborted) return;
            if (n === request.failAt) throw invalidRequest(`failed at ${n}`);
            log.produced.set(request.text, n + 1);
            yield { n };
            await pause(0);
          }
        } finally {
          log.closed.push(request.text);
        }
      },
    },
  };
}

const countRequest = (text: string, count: number, failAt?: number) =>
  Buffer.from(JSON.stringify({ text, count, ...(failAt !== undefined && { failAt }) }));

/** Reads a lane stream to its end (or the end of `limit` chunks). */
async function readAll(chunks: AsyncIterable<Chunk>, limit = Number.POSITIVE_INFINITY): Promise<number[]> {
  const seen: number[] = [];
  for await (const chunk of chunks) {
    seen.push(chunk.n);
    if (seen.length >= limit) break;
  }
  return seen;
}

describe('streaming calls on lanes', () => {
  /** Opens a lane to the next replica of the client's round-robin. */
  const openLane = async (client: LaneClient<Client, Answer, Chunk>) => {
    await client.call('Echo', ask({ text: 'open' }), { deadlineMs: 5_000 });
  };

  it('ride the lane from its first message: as the first call of a lane, and right after a rotation', async () => {
    const log = newLog();
    const { lanes, address } = await startLaneServer(countingStreams(log));
    const client = laneClient(address, { rotateMs: 200 });
    // The client's very first call is a stream: nothing has come back on its lane yet.
    const first = client.stream('Count', countRequest('first', 3), { deadlineMs: 5_000 });
    expect(await readAll(first)).toEqual([0, 1, 2]);
    expect(lanes.opened).toBe(1);
    // The lane is retired and ends; the next stream opens a new lane and goes on it at once.
    await waitFor(() => lanes.ended === 1, { timeoutMs: 2_000, what: 'the rotated lane to end' });
    const rotated = client.stream('Count', countRequest('rotated', 3), { deadlineMs: 5_000 });
    expect(await readAll(rotated)).toEqual([0, 1, 2]);
    expect(lanes.opened).toBe(2);
    // The server has nothing but lanes, and its lanes ran both.
    expect(log.closed).toEqual(['first', 'rotated']);
  });

  it('carry 50 concurrent streams on one lane, each with its chunks in order', async () => {
    const log = newLog();
    const { lanes, address } = await startLaneServer(countingStreams(log));
    const client = laneClient(address);
    const streams = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        readAll(client.stream('Count', countRequest(`s${index}`, 40 + index), { deadlineMs: 5_000 })),
      ),
    );
    streams.forEach((seen, index) => {
      expect(seen).toEqual(Array.from({ length: 40 + index }, (_, n) => n));
    });
    expect(lanes.opened).toBe(1);
    expect(log.closed).toHaveLength(50);
  });

  it('hold a reader that does not read to its window, without holding the other streams of the lane', async () => {
    const log = newLog();
    const { address } = await startLaneServer(countingStreams(log));
    const client = laneClient(address);
    const slow = client.stream('Count', countRequest('slow', 200), { deadlineMs: 10_000 });
    const first = await slow.next();
    expect(first.value).toEqual({ n: 0 });
    // The fast stream on the same lane runs to its end while the slow one is not read.
    const fast = await readAll(client.stream('Count', countRequest('fast', 200), { deadlineMs: 10_000 }));
    expect(fast).toHaveLength(200);
    await pause(100);
    // The slow one was granted 16 chunks: its server made at most those and the one it waits to send.
    expect(log.produced.get('slow')).toBeLessThanOrEqual(17);
    expect(log.produced.get('slow')).toBeGreaterThanOrEqual(16);
    // Read now, it comes whole and in order.
    const rest = await readAll(slow);
    expect([0, ...rest]).toEqual(Array.from({ length: 200 }, (_, n) => n));
  });

  it("end with the server's gateway error after the chunks sent before it", async () => {
    const log = newLog();
    const { address } = await startLaneServer(countingStreams(log));
    const client = laneClient(address);
    const seen: number[] = [];
    const failure = await (async () => {
      for await (const chunk of client.stream('Count', countRequest('bad', 10, 3), { deadlineMs: 5_000 }))
        seen.push(chunk.n);
    })().catch((error: unknown) => error);
    expect(seen).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ type: 'invalid_request', message: 'failed at 3' });
  });

  it('stop the server side of a stream its reader leaves early, or whose caller goes away', async () => {
    const log = newLog();
    const { address } = await startLaneServer(countingStreams(log));
    const client = laneClient(address);
    expect(
      await readAll(client.stream('Count', countRequest('left', 1_000), { deadlineMs: 5_000 }), 5),
    ).toEqual([0, 1, 2, 3, 4]);
    await waitFor(() => log.closed.includes('left'), { timeoutMs: 2_000, what: 'the left stream to stop' });
    expect(log.produced.get('left')).toBeLessThan(40);

    const caller = new AbortController();
    const gone = client.stream('Count', countRequest('gone', 1_000), {
      deadlineMs: 5_000,
      signal: caller.signal,
    });
    await gone.next();
    caller.abort();
    await expect(readAll(gone)).rejects.toMatchObject({ type: 'cancelled' });
    await waitFor(() => log.closed.includes('gone'), { timeoutMs: 2_000, what: 'the gone stream to stop' });
    // The lane still carries calls.
    expect(await readAll(client.stream('Count', countRequest('after', 3), { deadlineMs: 5_000 }))).toEqual([
      0, 1, 2,
    ]);
  });

  it('send a stream a draining replica refuses to another replica', async () => {
    const logs = [newLog(), newLog()];
    const first = await startLaneServer(countingStreams(logs[0]!));
    const second = await startLaneServer(countingStreams(logs[1]!));
    const client = laneClient(`${first.address},${second.address}`);
    // A lane to each replica; a call sent as the drain starts, which may reach a lane its server is ending (it
    // had nothing running): it never ran there, and is answered by the other replica, not failed.
    await Promise.all([openLane(client), openLane(client)]);
    const racing = client.call('Echo', ask({ text: 'racing', delayMs: 300 }), { deadlineMs: 5_000 });
    const drained = first.server.close(5_000);
    await pause(50);
    const seen = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        readAll(client.stream('Count', countRequest(`d${index}`, 3), { deadlineMs: 5_000 })),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 4 }, () => [0, 1, 2]));
    expect(logs[0]!.closed).toEqual([]);
    expect(logs[1]!.closed.sort()).toEqual(['d0', 'd1', 'd2', 'd3']);
    await expect(racing).resolves.toEqual({ text: 'racing' });
    await drained;
  });
});
