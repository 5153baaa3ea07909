// Lanes: many calls as messages on one stream per replica. Each caller gets its own answer whatever the order
// the server answers in; errors, cancellation and deadlines reach both ends as a unary call's would; a lane is
// replaced after its rotation period; a draining replica finishes the calls it has and the ones it refuses
// run on another replica, once.
import { status } from '@grpc/grpc-js';
import { waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import type { LaneHandler } from './lane-server.ts';
import { type Answer, ask, laneClient, pause, startLaneServer, stopAll, text } from './lane-test-kit.ts';

const delayedEcho: LaneHandler<Answer> = async (json) => {
  const request = text(json);
  await pause(request.delayMs ?? 0);
  return { text: request.text };
};

afterEach(stopAll);

describe('lanes', () => {
  it('answer 200 concurrent calls on one stream, each with its own answer, whatever the order', async () => {
    const { lanes, address } = await startLaneServer({
      calls: {
        Echo: async (json) => {
          const request = text(json);
          await pause(request.delayMs ?? 0);
          return { text: `Echo:${request.text}` };
        },
      },
    });
    const client = laneClient(address);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.call('Echo', ask({ text: `n${index}`, delayMs: (index * 7) % 20 }), { deadlineMs: 5_000 }),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 200 }, (_, index) => ({ text: `Echo:n${index}` })));
    expect(lanes.opened).toBe(1);
  });

  it("carry the server's gateway error as that error, and an internal error for anything else", async () => {
    const { address } = await startLaneServer({
      calls: {
        Echo: async (json) => {
          if (text(json).text === 'bad') throw invalidRequest("'model' is required");
          throw new TypeError('a bug that must not leak');
        },
      },
    });
    const client = laneClient(address);
    const refused = await client.call('Echo', ask({ text: 'bad' }), { deadlineMs: 5_000 }).catch((e) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ type: 'invalid_request', status: 400, message: "'model' is required" });
    const broken = await client.call('Echo', ask({ text: 'bug' }), { deadlineMs: 5_000 }).catch((e) => e);
    expect(broken).toMatchObject({ type: 'internal_error', status: 500 });
    expect(broken.message).not.toContain('must not leak');
  });

  it('cancel one call when its caller goes away: the handler sees the abort, the other calls go on', async () => {
    const aborted: string[] = [];
    const { address } = await startLaneServer({
      calls: {
        Echo: async (json, { signal }) => {
          const request = text(json);
          signal.addEventListener('abort', () => aborted.push(request.text));
          await pause(request.delayMs ?? 0);
          return { text: request.text };
        },
      },
    });
    const client = laneClient(address);
    const caller = new AbortController();
    const gone = client.call('Echo', ask({ text: 'gone', delayMs: 2_000 }), {
      deadlineMs: 5_000,
      signal: caller.signal,
    });
    const stays = client.call('Echo', ask({ text: 'stays', delayMs: 300 }), { deadlineMs: 5_000 });
    await pause(100);
    caller.abort();
    await expect(gone).rejects.toMatchObject({ type: 'cancelled' });
    await expect(stays).resolves.toEqual({ text: 'stays' });
    await waitFor(() => aborted.includes('gone'), { timeoutMs: 2_000, what: 'the abort on the server' });
    expect(aborted).toEqual(['gone']);
  });

  it('fail a call past its deadline as DEADLINE_EXCEEDED, and abort it on the server', async () => {
    let serverSignal: AbortSignal | undefined;
    const { address } = await startLaneServer({
      calls: {
        Echo: async (_json, { signal }) => {
          serverSignal = signal;
          await pause(5_000);
          return { text: 'late' };
        },
      },
    });
    const client = laneClient(address);
    const failure = await client.call('Echo', ask({ text: 'slow' }), { deadlineMs: 200 }).catch((e) => e);
    expect(failure).toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await waitFor(() => serverSignal?.aborted === true, { timeoutMs: 2_000, what: 'the cancel message' });
  });

  it('replace a lane after its rotation period; the old one ends once its calls are answered', async () => {
    const { lanes, address } = await startLaneServer({ calls: { Echo: delayedEcho } });
    const client = laneClient(address, { rotateMs: 200 });
    const long = client.call('Echo', ask({ text: 'long', delayMs: 600 }), { deadlineMs: 5_000 });
    await pause(300);
    await expect(client.call('Echo', ask({ text: 'next' }), { deadlineMs: 5_000 })).resolves.toEqual({
      text: 'next',
    });
    expect(lanes.opened).toBe(2);
    expect(lanes.ended).toBe(0);
    await expect(long).resolves.toEqual({ text: 'long' });
    await waitFor(() => lanes.ended === 1, { timeoutMs: 2_000, what: 'the old lane to end' });
  });

  it('let a draining replica finish its calls and send the ones it refuses to another replica', async () => {
    const ran: string[] = [];
    const handler =
      (name: string): LaneHandler<Answer> =>
      async (json) => {
        const request = text(json);
        ran.push(`${name}:${request.text}`);
        await pause(request.delayMs ?? 0);
        return { text: `${name}:${request.text}` };
      };
    const first = await startLaneServer({ calls: { Echo: handler('a') } });
    const second = await startLaneServer({ calls: { Echo: handler('b') } });
    const client = laneClient(`${first.address},${second.address}`);
    // Both replicas get a lane, and one long call each.
    const long = [
      client.call('Echo', ask({ text: 'long1', delayMs: 800 }), { deadlineMs: 5_000 }),
      client.call('Echo', ask({ text: 'long2', delayMs: 800 }), { deadlineMs: 5_000 }),
    ];
    await pause(100);
    const drained = first.server.close(5_000);
    await pause(50);
    const after = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        client.call('Echo', ask({ text: `after${index}` }), { deadlineMs: 5_000 }),
      ),
    );
    // Round-robin gave one long call to each replica; each finished where it ran.
    expect((await Promise.all(long)).map((answer) => answer.text[0]).sort()).toEqual(['a', 'b']);
    expect(after.every((answer) => answer.text.startsWith('b:'))).toBe(true);
    expect(ran.filter((entry) => entry.startsWith('a:after'))).toEqual([]);
    expect(ran.filter((entry) => entry.startsWith('b:after'))).toHaveLength(10);
    await drained;
    expect(first.lanes.ended).toBe(first.lanes.opened);
  });
});
