// Background settlement: a settle that fails for want of governance or Redis is retried until its
// reservation's deadline, so the request is charged what it used; refusals are final; a settle whose earlier
// try landed unanswered is done; shutdown stops the retries (the sweeper charges what is left).
import type { Admission, AuthorizeResult, SettleRequest } from '@gw/governance';
import { createLogger, GatewayError, serviceUnavailable, UnansweredCallError } from '@gw/shared';
import { waitFor } from '@gw/testkit';
import { expect, it } from 'vitest';
import { createSettler, settleStage } from './settle-stage.ts';
import type { CompletionExchange } from './stage.ts';

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function authorization(deadlineMs: number): AuthorizeResult {
  return {
    targets: [{ provider: 'openai', model: 'gpt-4o' }],
    settlement: {
      reservationId: 'res_1',
      virtualKeyId: 'vk',
      counters: [],
      providerCounters: {},
      alternativeProviders: ['openai'],
      estimate: { model: 'gpt-4o', provider: 'openai', usage: USAGE },
      deadlineMs,
    },
  };
}

/** An admission whose settles fail with the given errors first, then succeed; it records each try. */
function admission(failures: Error[]) {
  const tries: SettleRequest[] = [];
  const settled: SettleRequest[] = [];
  const service = {
    async settle(request: SettleRequest) {
      tries.push(request);
      const failure = failures.shift();
      if (failure) throw failure;
      settled.push(request);
    },
  } as unknown as Admission;
  return { service, tries, settled };
}

const logger = createLogger({ service: 'test', level: 'silent' });
const outcome = { provider: 'openai', model: 'gpt-4o', usage: USAGE };

it('retries a settle while governance is unavailable and charges the real usage once it is back', async () => {
  const unavailable = Array.from({ length: 6 }, () => serviceUnavailable('redis is down'));
  const fake = admission(unavailable);
  const settler = createSettler({ admission: fake.service, logger });
  settler.settle({ requestId: 'r1', authorization: authorization(Date.now() + 60_000) }, outcome);
  await waitFor(() => fake.settled.length === 1, { timeoutMs: 15_000, what: 'the settle to land' });
  expect(fake.tries).toHaveLength(7);
  expect(fake.settled[0]!.usage).toEqual(USAGE);
});

it('gives up at the reservation deadline, when the sweeper takes over', async () => {
  const fake = admission(Array.from({ length: 100 }, () => serviceUnavailable('redis is down')));
  const settler = createSettler({ admission: fake.service, logger });
  settler.settle({ requestId: 'r2', authorization: authorization(Date.now() + 300) }, outcome);
  await settler.drain();
  expect(fake.settled).toHaveLength(0);
  expect(fake.tries.length).toBeLessThan(6);
});

it('treats a refusal as final, and a reservation already settled by a lost try as done', async () => {
  const refused = admission([new GatewayError({ type: 'invalid_request', message: 'bad usage' })]);
  const first = createSettler({ admission: refused.service, logger });
  first.settle({ requestId: 'r3', authorization: authorization(Date.now() + 60_000) }, outcome);
  await first.drain();
  expect(refused.tries).toHaveLength(1);

  const lost = admission([
    serviceUnavailable('the answer was lost'),
    new GatewayError({ type: 'not_found', message: 'open reservation res_1 does not exist' }),
  ]);
  const second = createSettler({ admission: lost.service, logger });
  second.settle({ requestId: 'r4', authorization: authorization(Date.now() + 60_000) }, outcome);
  await waitFor(() => lost.tries.length === 2, { what: 'the retry' });
  await second.drain();
  expect(lost.tries).toHaveLength(2);
});

it('stops retrying when the process drains', async () => {
  const fake = admission(Array.from({ length: 100 }, () => serviceUnavailable('redis is down')));
  const settler = createSettler({ admission: fake.service, logger });
  settler.settle({ requestId: 'r5', authorization: authorization(Date.now() + 600_000) }, outcome);
  await waitFor(() => fake.tries.length >= 2, { what: 'a retry' });
  const started = Date.now();
  await settler.drain();
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(fake.settled).toHaveLength(0);
});

it('leaves a call its router lost to the sweeper (the router reports what it served), and settles a plain failure', async () => {
  const fake = admission([]);
  const settler = createSettler({ admission: fake.service, logger });
  const stage = settleStage(settler);
  const exchange = (requestId: string): CompletionExchange => ({
    requestId,
    headers: {},
    signal: new AbortController().signal,
    authorization: authorization(Date.now() + 60_000),
    route: { requestId, operation: 'chat', targets: [], params: {}, messages: [] },
  });
  const lost = new UnansweredCallError(serviceUnavailable('a router replica stopped answering'));
  await expect(stage.complete!(exchange('lost'), () => Promise.reject(lost))).rejects.toBe(lost);
  await expect(stage.stream!(exchange('lost-stream'), () => Promise.reject(lost))).rejects.toBe(lost);
  const failed = serviceUnavailable('no router replica could take the call');
  await expect(stage.complete!(exchange('failed'), () => Promise.reject(failed))).rejects.toBe(failed);
  await settler.drain();
  // Only the plain failure was settled here: with nothing served, its reservation released.
  expect(new Set(fake.tries.map((request) => request.requestId))).toEqual(new Set(['failed']));
  expect(fake.settled[0]!.usage.total_tokens).toBe(0);
});
