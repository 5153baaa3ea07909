// "Charges equal to what was served" (issue 41): under a steady governed load a router replica is killed, or
// frozen, or nothing happens at all, and the key's budget is charged exactly what the fake upstream served. A
// call the ingress lost (its router killed, frozen, or late) is charged by the sweeper from what the router
// reported of it: the answer's usage when the upstream answered, the prompt when the router cut the upstream
// call short (its caller gone), and the admission estimate only when no report can come (a killed router).
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedCluster,
  type LaunchedGateway,
  listenerPid,
  scaled,
  startCluster,
  startEmbedded,
  startFakeUpstream,
  waitFor,
} from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';
import { openReservations } from './support/reservations.ts';
import { charged, steadyLoad } from './support/steady-load.ts';

const ADMIN = { authorization: 'Bearer lost-admin' };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
/** Micro-dollars a token ($1,000 per million tokens either way). */
const TOKEN_MICROS = 1_000;
/** What the fake answers: 11 prompt and 7 completion tokens. */
const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
/** The prompt as admission estimates it (3 priming the reply, 4 framing the message, 1 for its two characters). */
const PROMPT_ESTIMATE = 3 + 4 + 1;
/** A served answer, an upstream call cut short (its prompt), and a call no report can come for (the estimate). */
const ANSWER_MICROS = USAGE.total_tokens * TOKEN_MICROS;
const PROMPT_MICROS = PROMPT_ESTIMATE * TOKEN_MICROS;
const ESTIMATE_MICROS = (PROMPT_ESTIMATE + 256) * TOKEN_MICROS;
/**
 * How long the fake takes to answer, as a model does: a router killed or frozen under load has its calls
 * waiting on the upstream, not in its own few hundred microseconds of work.
 */
const answerDelay = { ms: 150 };

function config(fake: FakeUpstream): GatewayConfigInput {
  return {
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
    governance: {
      pricing: { 'gpt-4o-mini': { input: 1_000, output: 1_000 } },
      // A lost call is charged by the sweeper at its deadline: longer than any request, and than the freeze.
      settings: { settle_deadline_ms: 8_000, sweep_interval_ms: 250, expected_completion_tokens: 256 },
    },
  };
}

/** A fake OpenAI whose answers take `answerDelay` and report USAGE. */
function startSlowFake(): Promise<FakeUpstream> {
  return startFakeUpstream([
    {
      method: 'POST',
      path: /\/chat\/completions$/,
      answer: () => ({ json: chatCompletion({ usage: USAGE }), delayMs: answerDelay.ms }),
    },
  ]);
}

/** What the fake did since `from`: answers it finished, and calls whose client went away before the answer. */
function upstreamSince(fake: FakeUpstream, from: { requests: number; aborted: number }) {
  const aborted = fake.abortedCount - from.aborted;
  return { answered: fake.requests.length - from.requests - aborted, aborted };
}

async function createKey(gateway: LaunchedGateway, name: string) {
  const created = await post(
    `${gateway.adminUrl}/api/governance/virtual-keys`,
    {
      name,
      provider_configs: [{ provider: 'openai' }],
      budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
    },
    { headers: ADMIN },
  );
  expect(created.status).toBe(201);
  return created.body as { id: string; value: string };
}

/**
 * Sends the steady load with a fresh key while `fault` plays, then waits until the key's spend (in
 * micro-dollars) is what `expected` makes of what the fake did, and answers the load's outcomes.
 */
async function chargedAsServed(options: {
  gateway: LaunchedGateway;
  fake: FakeUpstream;
  name: string;
  fault: () => Promise<void>;
  expected: (upstream: { answered: number; aborted: number }) => number;
}) {
  const { gateway, fake } = options;
  const key = await createKey(gateway, options.name);
  const from = { requests: fake.requests.length, aborted: fake.abortedCount };
  const outcomes = await steadyLoad(
    () => post(`${gateway.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': key.value } }),
    options.fault(),
  );
  // Every reservation settled (a lost call's by the sweeper, at its deadline): until then the spend holds it.
  if (gateway.mode === 'cluster') {
    const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
    const prefix = (gateway as LaunchedCluster).prefix;
    await waitFor(async () => (await openReservations(redis, prefix)).length === 0, {
      timeoutMs: 30_000,
      what: 'every reservation settled',
    }).finally(() => redis.quit());
  }
  const spent = async () => Math.round((await charged(gateway.adminUrl, key.id, ADMIN)) * 1_000_000);
  await waitFor(
    async () => {
      const [now, upstream] = [await spent(), upstreamSince(fake, from)];
      const expected = options.expected(upstream);
      if (now === expected) return true;
      throw new Error(`charged ${now}, expected ${expected} (upstream ${JSON.stringify(upstream)})`);
    },
    {
      timeoutMs: 30_000,
      what: `${options.name}: the spend of what was served`,
    },
  );
  const upstream = upstreamSince(fake, from);
  const served = outcomes.filter((outcome) => outcome.status === 200).length;
  console.info(
    `${options.name}: ${outcomes.length} requests, ${served} answered 200, upstream answered ${upstream.answered} ` +
      `and lost ${upstream.aborted}; charged ${await spent()} micro-dollars`,
  );
  return { outcomes, upstream };
}

// Drill time: how long the load runs or a fault is held, not a wait for something to happen.
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('charges equal to what was served (cluster: 2 routers)', () => {
  let fake: FakeUpstream;
  let cluster: Awaited<ReturnType<typeof startCluster>>;

  beforeAll(async () => {
    fake = await startSlowFake();
    cluster = await startCluster({
      adminToken: 'lost-admin',
      replicas: { router: 2 },
      config: config(fake),
    });
  }, scaled(60_000));
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it('a loaded run with no fault: every answer the upstream served, nothing else', {
    timeout: scaled(60_000),
  }, async () => {
    const { outcomes, upstream } = await chargedAsServed({
      gateway: cluster,
      fake,
      name: 'no fault',
      fault: () => pause(3_000),
      expected: ({ answered }) => answered * ANSWER_MICROS,
    });
    expect(upstream.aborted).toBe(0);
    expect(outcomes.filter((outcome) => outcome.status === 200).length).toBe(upstream.answered);
  });

  it('a router frozen: the calls it dropped when thawed cost their prompt, those it never sent nothing', {
    timeout: scaled(60_000),
  }, async () => {
    const pid = await listenerPid(cluster.ports.router[0]!);
    // The answers come after the thaw: the router, told on thaw that their caller is gone, cuts them short.
    answerDelay.ms = 5_000;
    const { outcomes } = await chargedAsServed({
      gateway: cluster,
      fake,
      name: 'router frozen 3 s',
      fault: async () => {
        await pause(1_000);
        process.kill(pid, 'SIGSTOP');
        await pause(3_000);
        process.kill(pid, 'SIGCONT');
        await pause(1_000);
      },
      // A call it had sent upstream is cut short on thaw: its prompt. One it took while frozen is never sent.
      expected: ({ answered, aborted }) => answered * ANSWER_MICROS + aborted * PROMPT_MICROS,
    }).finally(() => {
      answerDelay.ms = 150;
    });
    // Before this, each of these was charged what admission reserved (264 tokens).
    expect(outcomes.some((outcome) => outcome.status === 503)).toBe(true);
  });

  it('a router killed: what was served, and the estimate only for the calls it died with', {
    timeout: scaled(60_000),
  }, async () => {
    const pid = await listenerPid(cluster.ports.router[1]!);
    // No answer is due when it dies: the calls it had upstream die with it, none half-answered.
    answerDelay.ms = 5_000;
    const { upstream } = await chargedAsServed({
      gateway: cluster,
      fake,
      name: 'router killed',
      fault: async () => {
        await pause(1_000);
        process.kill(pid, 'SIGKILL');
        await pause(2_000);
      },
      // The upstream saw them go, and no report can come for them: what admission expected them to cost.
      expected: ({ answered, aborted }) => answered * ANSWER_MICROS + aborted * ESTIMATE_MICROS,
    }).finally(() => {
      answerDelay.ms = 150;
    });
    expect(upstream.aborted).toBeGreaterThan(0);
  });
});

describe('charges equal to what was served (embedded)', () => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startSlowFake();
    gateway = await startEmbedded({ adminToken: 'lost-admin', config: config(fake) });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('a loaded run: every answer the upstream served, nothing else', {
    timeout: scaled(60_000),
  }, async () => {
    const { upstream } = await chargedAsServed({
      gateway,
      fake,
      name: 'embedded',
      fault: () => pause(3_000),
      expected: ({ answered }) => answered * ANSWER_MICROS,
    });
    expect(upstream.aborted).toBe(0);
  });
});
