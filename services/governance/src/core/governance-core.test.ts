import { randomUUID } from 'node:crypto';
import { GatewayError, parseGatewayConfig, silentLogger } from '@gw/shared';
import { MemoryStore, RedisStore, type Store } from '@gw/shared/store';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { liveGovernance } from '../testing/live-governance.ts';
import { GovernanceCore } from './governance-core.ts';
import type { AuthorizeRequest } from './governance-service.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const stores: Store[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  // Each Redis case had its own prefix: remove what it left.
  const redis = new Redis(REDIS_URL);
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  await redis.quit();
});

const backends: Array<[string, () => Promise<Store>]> = [
  ['memory', () => MemoryStore.open()],
  [
    'redis',
    () => {
      const prefix = `gw-test:gov:${randomUUID()}:`;
      prefixes.push(prefix);
      return RedisStore.connect({ url: REDIS_URL, prefix });
    },
  ],
];

/** A governance core over a fresh store, a controllable clock and a price of $1 per million tokens either way (1 micro-USD per token). */
async function setup(
  create: () => Promise<Store>,
  options: { strict?: boolean; governance?: object; logger?: ReturnType<typeof silentLogger> } = {},
) {
  const store = await create();
  stores.push(store);
  const clock = { now: Date.parse('2026-11-22T10:00:00Z') };
  const config = parseGatewayConfig({
    governance: {
      pricing: { 'gpt-test': { input: 1, output: 1 } },
      settings: { strict_budgets: options.strict ?? false, sweep_interval_ms: 0, settle_deadline_ms: 60_000 },
      ...options.governance,
    },
  });
  const core = await GovernanceCore.start({
    store,
    logger: options.logger ?? silentLogger(),
    ...liveGovernance(config),
    now: () => clock.now,
  });
  const createKey = async (body: object) =>
    (await core.manage({ action: 'create', collection: 'virtual-keys', body })) as {
      id: string;
      value: string;
    };
  const request = (virtualKey: string, overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest => ({
    requestId: randomUUID(),
    kind: 'llm',
    virtualKey,
    headerNames: [],
    targets: [{ provider: 'openai', model: 'gpt-test' }],
    ...overrides,
  });
  return { core, store, clock, createKey, request };
}

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const openaiOnly = [{ provider: 'openai', allowed_models: ['*'] }];

describe.each(backends)('GovernanceCore over %s', (_name, create) => {
  it('lets a request limit pass again when its window expires', async () => {
    const { core, clock, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'limited',
      provider_configs: openaiOnly,
      rate_limit: { request_max_limit: 2, request_reset_duration: '1m' },
    });
    await core.authorize(request(key.value));
    await core.authorize(request(key.value));
    const refused = await rejection(core.authorize(request(key.value)));
    expect(refused).toMatchObject({ type: 'request_limit_exceeded', code: 'virtual_key' });
    expect(refused.retryAfter).toBe(60);
    clock.now += 60_000;
    await expect(core.authorize(request(key.value))).resolves.toMatchObject({ virtualKeyId: key.id });
  });

  it('charges cost to every budget of the hierarchy and resets at the period end', async () => {
    const { core, clock, createKey, request } = await setup(create);
    const team = await core.manage({
      action: 'create',
      collection: 'teams',
      body: {
        name: 'platform',
        budget: { max_limit: 0.00005, reset_duration: '1d', calendar_aligned: true },
      },
    });
    const key = await createKey({
      name: 'spender',
      team_id: team.id,
      provider_configs: openaiOnly,
      budgets: [{ max_limit: 1, reset_duration: '1M' }],
    });
    const plan = await core.authorize(request(key.value));
    // 30 tokens at $1 per million = 30 micro-USD.
    await core.settle({
      requestId: 'r1',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(20, 10),
    });
    const second = await core.authorize(request(key.value));
    await core.settle({
      requestId: 'r2',
      settlement: second.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(20, 10),
    });
    const refused = await rejection(core.authorize(request(key.value)));
    expect(refused).toMatchObject({
      type: 'budget_exceeded',
      code: 'team',
      owners: { virtualKeyId: key.id, virtualKeyName: 'spender', teamId: team.id },
    });
    expect(refused.message).toContain("team 'platform'");
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]).toMatchObject({ kind: 'budget', used: 0.00006 });
    clock.now = Date.parse('2026-11-23T00:00:01Z');
    await expect(core.authorize(request(key.value))).resolves.toMatchObject({ virtualKeyId: key.id });
  });

  it('refuses a model without a price under a budget, and charges the configured price when there is one', async () => {
    const { core, createKey, request } = await setup(create);
    const budgeted = await createKey({
      name: 'budgeted-unpriced',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    const unpriced = { targets: [{ provider: 'openai', model: 'my-finetune-xyz' }] };
    const refused = await rejection(core.authorize(request(budgeted.value, unpriced)));
    expect(refused).toMatchObject({ type: 'model_not_allowed', status: 403, model: 'my-finetune-xyz' });
    expect(refused.message).toContain('PUT /api/pricing/models/my-finetune-xyz');
    // Without a budget nothing is charged anyway: the request goes through.
    const free = await createKey({ name: 'no-budget', provider_configs: openaiOnly });
    await expect(core.authorize(request(free.value, unpriced))).resolves.toMatchObject({
      virtualKeyId: free.id,
    });

    const priced = await setup(create, {
      governance: { settings: { sweep_interval_ms: 0, unpriced_model_price: { input: 2, output: 2 } } },
    });
    const key = await priced.createKey({
      name: 'default-priced',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    const plan = await priced.core.authorize(priced.request(key.value, unpriced));
    await priced.core.settle({
      requestId: 'p',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'my-finetune-xyz',
      usage: usage(100, 50),
    });
    const keyUsage = await priced.core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBe(0.0003);
  });

  it("charges a completed batch's usage once, at its model's batch prices as its provider serves it", async () => {
    const { core, createKey, request } = await setup(create, {
      governance: {
        pricing: {
          'gpt-b': { input: 2, output: 8, cached_input: 1, batch: { input: 1, output: 4 } },
          // Azure's own price of the model, without batch prices: its list prices then.
          'azure/gpt-b': { input: 3, output: 12 },
        },
      },
    });
    const key = await createKey({
      name: 'batches',
      provider_configs: [...openaiOnly, { provider: 'azure', allowed_models: ['*'] }],
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    const used = async () =>
      (await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id })).usage[0]!.entries[0]!
        .used;
    /** A GET of a batch object: a call that names no model, settled with the completed batch's usage. */
    const readBatch = async (provider: string, id: string) => {
      const plan = await core.authorize(request(key.value, { targets: [{ provider, model: '*' }] }));
      return core.settle({
        requestId: randomUUID(),
        settlement: plan.settlement!,
        provider,
        model: '*',
        usage: {
          ...usage(10_000, 1_000),
          prompt_tokens_details: { cached_tokens: 2_000 },
          batch: { id, model: 'gpt-b-2025-01-01' },
        },
      });
    };
    // 8,000 × $1 + 2,000 cached at the batch's input (it lists no cached price) + 1,000 × $4.
    expect(await readBatch('openai', 'batch_1')).toMatchObject({ cost: 0.014 });
    expect(await used()).toBeCloseTo(0.014, 9);
    // Read again (polled after it completed, by this key or another): nothing more.
    expect(await readBatch('openai', 'batch_1')).toEqual({
      cost: 0,
      cost_breakdown: { input: 0, cached_input: 0, cache_write: 0, output: 0, reasoning: 0 },
    });
    expect(await used()).toBeCloseTo(0.014, 9);
    // Azure's batch of that id is another batch, at Azure's own price of the model: 10,000 × $3 + 1,000 × $12.
    expect(await readBatch('azure', 'batch_1')).toMatchObject({ cost: 0.042 });
    expect(await used()).toBeCloseTo(0.056, 9);
  });

  it('bounds a default budget under 200 concurrent requests: admitted ones reserve what they are expected to cost', async () => {
    // A request costs $0.018 (18 tokens at $1,000 per million) and is expected to (10 prompt + 8 completion).
    const { core, createKey, request } = await setup(create, {
      governance: {
        pricing: { 'gpt-test': { input: 1000, output: 1000 } },
        settings: { sweep_interval_ms: 0, expected_completion_tokens: 8 },
      },
    });
    const key = await createKey({
      name: 'crowded',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.1, reset_duration: '1d' },
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, () =>
        core.authorize(request(key.value, { estimate: { promptTokens: 10 } })),
      ),
    );
    const admitted = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    // Before any settles, admission stops once the reservations reach the budget: six of $0.018.
    expect(admitted).toHaveLength(6);
    for (const [index, plan] of admitted.entries()) {
      await core.settle({
        requestId: `c${index}`,
        settlement: plan.settlement!,
        provider: 'openai',
        model: 'gpt-test',
        usage: usage(10, 8),
      });
    }
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    // Over by less than one request: the overshoot is bounded by what one admitted request may add.
    expect(keyUsage.usage[0]!.entries[0]!.used).toBeCloseTo(0.108, 9);
  });

  it('never lets a strict budget go over, reserving the worst case of every choice (n)', async () => {
    const { core, createKey, request } = await setup(create, {
      strict: true,
      governance: { pricing: { 'gpt-test': { input: 1000, output: 1000 } } },
    });
    const key = await createKey({
      name: 'strict-n',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.1, reset_duration: '1d' },
    });
    const ask = (choices: number) =>
      core.authorize(request(key.value, { estimate: { promptTokens: 10, maxCompletionTokens: 9, choices } }));
    // n = 20 could cost 10 + 9 × 20 tokens = $0.19: more than the budget holds.
    expect(await rejection(ask(20))).toMatchObject({ type: 'budget_exceeded' });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => ask(5)));
    const admitted = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(admitted).toHaveLength(1);
    await core.settle({
      requestId: 'n5',
      settlement: admitted[0]!.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(10, 45),
    });
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBeLessThanOrEqual(0.1);
  });

  it('reserves an audio answer at its audio prices, never under what it is charged', async () => {
    const { core, createKey, request } = await setup(create, {
      strict: true,
      governance: {
        pricing: { 'gpt-audio-test': { input: 2.5, output: 10, audio_input: 40, audio_output: 80 } },
      },
    });
    const key = await createKey({
      name: 'spoken',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.08, reset_duration: '1d' },
    });
    const used = async () =>
      (await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id })).usage[0]!.entries[0]!
        .used;
    const ask = (maxCompletionTokens: number) =>
      core.authorize(
        request(key.value, {
          targets: [{ provider: 'openai', model: 'gpt-audio-test' }],
          estimate: { promptTokens: 1_000, maxCompletionTokens },
        }),
      );
    // Spoken in and out: 1,000 × $40 + 501 × $80 is over the $0.08 budget (at the text prices it was $0.0075).
    expect(await rejection(ask(501))).toMatchObject({ type: 'budget_exceeded' });
    const plan = await ask(500);
    const reserved = await used();
    expect(reserved).toBeCloseTo(0.08, 9);
    await core.settle({
      requestId: 'spoken',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'gpt-audio-test',
      usage: {
        ...usage(1_000, 500),
        prompt_tokens_details: { audio_tokens: 1_000 },
        completion_tokens_details: { audio_tokens: 500 },
      },
    });
    const charged = await used();
    expect(charged).toBeCloseTo(0.08, 9);
    expect(reserved).toBeGreaterThanOrEqual(charged);
  });

  it('serves a strict request without max_tokens with the max_tokens the budget left buys', async () => {
    const { core, createKey, request } = await setup(create, {
      strict: true,
      governance: {
        pricing: { 'gpt-test': { input: 1000, output: 1000 } },
        settings: { strict_budgets: true, sweep_interval_ms: 0, default_max_completion_tokens: 4096 },
      },
    });
    const key = await createKey({
      name: 'small-strict',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.1, reset_duration: '1d' },
    });
    // $0.10 buys 100 tokens: 10 of prompt, 90 of answer (4,096 would cost $4.10).
    const plan = await core.authorize(request(key.value, { estimate: { promptTokens: 10 } }));
    expect(plan.maxCompletionTokens).toBe(90);
    await core.settle({
      requestId: 'cap',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(10, 90),
    });
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBeCloseTo(0.1, 9);
    // Nothing left that buys a useful answer: refused.
    expect(
      await rejection(core.authorize(request(key.value, { estimate: { promptTokens: 10 } }))),
    ).toMatchObject({
      type: 'budget_exceeded',
    });
    // A request that set its own max_tokens is never changed: admitted or refused as it is.
    const fresh = await createKey({
      name: 'explicit',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.1, reset_duration: '1d' },
    });
    expect(
      await rejection(
        core.authorize(request(fresh.value, { estimate: { promptTokens: 10, maxCompletionTokens: 500 } })),
      ),
    ).toMatchObject({ type: 'budget_exceeded' });
  });

  it('serves a strict request without max_tokens with the max_tokens its team budget left buys', async () => {
    const { core, createKey, request } = await setup(create, {
      strict: true,
      governance: {
        pricing: { 'gpt-test': { input: 1000, output: 1000 } },
        settings: { strict_budgets: true, sweep_interval_ms: 0, default_max_completion_tokens: 4096 },
      },
    });
    const team = await core.manage({
      action: 'create',
      collection: 'teams',
      body: { name: 'small-team', budget: { max_limit: 0.1, reset_duration: '1d' } },
    });
    const key = await createKey({
      name: 'roomy-key',
      team_id: team.id,
      provider_configs: openaiOnly,
      budget: { max_limit: 1_000, reset_duration: '1d' },
    });
    // The key's step counts, the team's refuses the default 4,096 tokens ($4.10): the key's is given back, and
    // the request admitted again at what $0.10 buys, 90 tokens after a prompt of 10.
    const plan = await core.authorize(request(key.value, { estimate: { promptTokens: 10 } }));
    expect(plan.maxCompletionTokens).toBe(90);
    await core.settle({
      requestId: 'team-cap',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(10, 90),
    });
    // Each charged the request once: the refused first try left nothing counted.
    for (const [collection, id] of [
      ['virtual-keys', key.id],
      ['teams', team.id],
    ] as const) {
      const spent = await core.manage({ action: 'usage', collection, id });
      expect(spent.usage[0]!.entries[0]!.used).toBeCloseTo(0.1, 9);
    }
  });

  it('admits a request once however many replicas are asked, also after it settled', async () => {
    const { core, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'asked-twice',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
      rate_limit: { request_max_limit: 10, request_reset_duration: '1h' },
    });
    // A governance replica's answer was lost; ingress asks another with the same request.
    const once = request(key.value, { estimate: { promptTokens: 100 } });
    const first = await core.authorize(once);
    const second = await core.authorize(once);
    expect(second.settlement!.reservationId).toBe(first.settlement!.reservationId);
    await core.settle({
      requestId: 'x',
      settlement: first.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(100, 0),
    });
    // The paused replica resumes and admits it again: nothing is counted again.
    await core.authorize(once);
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    const [budget, requests] = keyUsage.usage[0]!.entries;
    expect(budget!.used).toBe(0.0001);
    expect(requests).toMatchObject({ used: 1 });
  });

  it('settles a plan exactly once', async () => {
    const { core, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'once',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    const plan = await core.authorize(request(key.value));
    const settle = {
      requestId: 'r',
      settlement: plan.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(100, 0),
    };
    await Promise.all([core.settle(settle), core.settle(settle), core.settle(settle)]);
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBe(0.0001);
    // Once settled, the reservation is no longer open: a later settle is refused and charges nothing.
    await expect(core.settle(settle)).rejects.toMatchObject({ type: 'not_found' });
    const again = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(again.usage[0]!.entries[0]!.used).toBe(0.0001);
  });

  it('charges a side call (a cache lookup’s embedding) with the answer, each at its own model’s price', async () => {
    const { core, createKey, request } = await setup(create, {
      governance: {
        pricing: { 'gpt-test': { input: 1, output: 1 }, 'embed-test': { input: 10, output: 0 } },
      },
    });
    const key = await createKey({
      name: 'side-calls',
      provider_configs: [
        {
          provider: 'openai',
          allowed_models: ['*'],
          rate_limit: { token_max_limit: 10_000, token_reset_duration: '1h' },
        },
      ],
      budget: { max_limit: 1, reset_duration: '1d' },
      rate_limit: { token_max_limit: 10_000, token_reset_duration: '1h' },
    });
    const embedding = { provider: 'embedder', model: 'embed-test', usage: usage(5, 0) };
    // A cache hit: the answer costs nothing, the embedding 5 tokens at $10 per million.
    const hit = await core.authorize(request(key.value));
    await core.settle({
      requestId: 'hit',
      settlement: hit.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(0, 0),
      calls: [embedding],
    });
    const afterHit = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(afterHit.usage[0]!.entries).toMatchObject([
      { kind: 'budget', used: 0.00005 },
      { kind: 'tokens', used: 5 },
    ]);
    // The provider config's limit counts only what its provider served: the embedding came from another.
    expect(afterHit.usage[1]).toMatchObject({ scope: 'provider_config:openai', entries: [{ used: 0 }] });
    // A miss: the answer (30 tokens at $1 per million) and the embedding.
    const miss = await core.authorize(request(key.value));
    const charged = await core.settle({
      requestId: 'miss',
      settlement: miss.settlement!,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(20, 10),
      calls: [embedding],
    });
    // What it was billed for, answer and embedding together: 20 + 50 micro-dollars of input, 10 of output.
    expect(charged).toEqual({
      cost: 80 / 1e6,
      cost_breakdown: { input: 70 / 1e6, cached_input: 0, cache_write: 0, output: 10 / 1e6, reasoning: 0 },
    });
    const afterMiss = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(afterMiss.usage[0]!.entries).toMatchObject([
      { kind: 'budget', used: 0.00013 },
      { kind: 'tokens', used: 40 },
    ]);
    expect(afterMiss.usage[1]).toMatchObject({ entries: [{ used: 30 }] });
  });

  it('settles against the reservation it recorded: a forged plan or an unknown reservation gives nothing back', async () => {
    const { core, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'forger',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    const spend = async (tokens: number) => {
      const plan = await core.authorize(request(key.value));
      await core.settle({
        requestId: `spend-${tokens}`,
        settlement: plan.settlement!,
        provider: 'openai',
        model: 'gpt-test',
        usage: usage(tokens, 0),
      });
    };
    await spend(500);
    const used = async () =>
      (await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id })).usage[0]!.entries[0]!
        .used;
    expect(await used()).toBe(0.0005);
    const plan = await core.authorize(request(key.value));
    // The caller claims admission reserved $999 on each counter: settling "refunds" the difference.
    const forged = {
      ...plan.settlement!,
      counters: plan.settlement!.counters.map((counter) => ({ ...counter, reserved: 999_000_000 })),
    };
    await core.settle({
      requestId: 'f',
      settlement: forged,
      provider: 'openai',
      model: 'gpt-test',
      usage: usage(100, 0),
    });
    expect(await used()).toBe(0.0006);
    const unknown = { ...plan.settlement!, reservationId: 'res_never-made' };
    await expect(
      core.settle({
        requestId: 'u',
        settlement: unknown,
        provider: 'openai',
        model: 'gpt-test',
        usage: usage(1, 0),
      }),
    ).rejects.toMatchObject({ type: 'not_found', message: expect.stringContaining('res_never-made') });
    expect(await used()).toBe(0.0006);
  });

  it('charges a reservation whose settle never came at its estimate, once', async () => {
    const { core, clock, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'crashed',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    await core.authorize(request(key.value, { estimate: { promptTokens: 40, maxCompletionTokens: 10 } }));
    expect(await core.sweep()).toBe(0);
    clock.now += 61_000;
    expect(await core.sweep()).toBe(1);
    expect(await core.sweep()).toBe(0);
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBe(0.00005);
  });

  it('charges an unsettled request without max_tokens what admission reserved, not the worst case', async () => {
    const { core, clock, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'crashed-unbounded',
      provider_configs: openaiOnly,
      budget: { max_limit: 1, reset_duration: '1d' },
    });
    // Reserved: 40 prompt tokens and the expected completion (256), not default_max_completion_tokens (4096).
    await core.authorize(request(key.value, { estimate: { promptTokens: 40 } }));
    clock.now += 61_000;
    expect(await core.sweep()).toBe(1);
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(keyUsage.usage[0]!.entries[0]!.used).toBe(0.000296);
  });

  describe('a request whose settle never came, charged from what its routers reported', () => {
    /** Authorizes a request of 40 prompt tokens, lets its deadline pass with `reports` written, sweeps. */
    async function swept(reports: object[], options: { strict?: boolean } = {}) {
      const { core, store, clock, createKey, request } = await setup(create, options);
      const key = await createKey({
        name: `lost-${randomUUID()}`,
        provider_configs: openaiOnly,
        budget: { max_limit: 1, reset_duration: '1d' },
      });
      const admitted = request(key.value, { estimate: { promptTokens: 40 } });
      await core.authorize(admitted);
      for (const report of reports)
        await store.reportCall(admitted.requestId, JSON.stringify(report), 60_000);
      clock.now += 61_000;
      expect(await core.sweep()).toBe(1);
      expect(await core.sweep()).toBe(0);
      const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
      return keyUsage.usage[0]!.entries[0]!.used;
    }

    it('an answered call: the usage of its answer', async () => {
      const answered = { outcome: 'answered', attempts: 1, provider: 'openai', model: 'gpt-test' };
      expect(await swept([{ ...answered, usage: usage(11, 7) }])).toBe(0.000018);
    });

    it('every answered call of the request (a cache embedding and the answer)', async () => {
      const answered = { outcome: 'answered', attempts: 1, provider: 'openai', model: 'gpt-test' };
      expect(await swept([answered, answered].map((call) => ({ ...call, usage: usage(5, 1) })))).toBe(
        0.000012,
      );
    });

    it('a call never sent upstream, or whose every attempt failed: nothing', async () => {
      expect(await swept([{ outcome: 'failed', attempts: 0 }])).toBe(0);
      expect(await swept([{ outcome: 'failed', attempts: 2 }])).toBe(0);
    });

    it('a call sent upstream and cancelled before its answer: the prompt', async () => {
      expect(await swept([{ outcome: 'unmetered', attempts: 1 }])).toBe(0.00004);
    });

    it('no report: the estimate (the prompt and the expected completion), also under strict budgets', async () => {
      expect(await swept([])).toBe(0.000296);
      // Strict budgets reserve the worst case (4,096 completion tokens): the estimate stays the expected one.
      expect(await swept([], { strict: true })).toBe(0.000296);
    });
  });

  it('in strict mode reserves the worst case so concurrent requests never overspend', async () => {
    const { core, createKey, request } = await setup(create, { strict: true });
    // Worst case per request: (10 + 90) tokens = 100 micro-USD; the budget holds 1000.
    const key = await createKey({
      name: 'strict',
      provider_configs: openaiOnly,
      budget: { max_limit: 0.001, reset_duration: '1d' },
    });
    const attempts = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        core.authorize(request(key.value, { estimate: { promptTokens: 10, maxCompletionTokens: 90 } })),
      ),
    );
    const admitted = attempts.filter((attempt) => attempt.status === 'fulfilled');
    expect(admitted).toHaveLength(10);
    for (const attempt of admitted) {
      const plan = (attempt as PromiseFulfilledResult<Awaited<ReturnType<typeof core.authorize>>>).value;
      await core.settle({
        requestId: 'x',
        settlement: plan.settlement!,
        provider: 'openai',
        model: 'gpt-test',
        usage: usage(10, 40),
      });
    }
    const keyUsage = await core.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    // Real cost 50 each: the reservations were released down to what was spent.
    expect(keyUsage.usage[0]!.entries[0]!.used).toBe(0.0005);
  });

  it('skips a provider over its own limit and keeps the key’s other providers', async () => {
    const { core, createKey, request } = await setup(create);
    const key = await createKey({
      name: 'two-providers',
      provider_configs: [
        {
          provider: 'openai',
          weight: 1,
          allowed_models: ['gpt-test'],
          rate_limit: { request_max_limit: 1, request_reset_duration: '1h' },
        },
        { provider: 'azure', weight: 0, allowed_models: ['gpt-test'] },
      ],
    });
    const bare = () => request(key.value, { targets: [{ provider: '', model: 'gpt-test' }] });
    expect((await core.authorize(bare())).targets.map((target) => target.provider)).toEqual([
      'openai',
      'azure',
    ]);
    expect((await core.authorize(bare())).targets.map((target) => target.provider)).toEqual(['azure']);
    const explicit = await rejection(core.authorize(request(key.value)));
    expect(explicit).toMatchObject({ type: 'request_limit_exceeded', code: 'provider_config' });
  });

  it('denies by access rules and key status', async () => {
    const { core, clock, createKey, request } = await setup(create);
    const none = await createKey({ name: 'no-providers' });
    expect(await rejection(core.authorize(request(none.value)))).toMatchObject({
      type: 'provider_not_allowed',
    });
    const empty = await createKey({
      name: 'empty-models',
      provider_configs: [{ provider: 'openai', allowed_models: [] }],
    });
    expect(await rejection(core.authorize(request(empty.value)))).toMatchObject({
      type: 'model_not_allowed',
    });
    const other = await createKey({ name: 'anthropic-only', provider_configs: [{ provider: 'anthropic' }] });
    expect(await rejection(core.authorize(request(other.value)))).toMatchObject({
      type: 'provider_not_allowed',
    });
    const inactive = await createKey({ name: 'off', provider_configs: openaiOnly, is_active: false });
    // A known key refused names itself for the request's log record.
    expect(await rejection(core.authorize(request(inactive.value)))).toMatchObject({
      type: 'virtual_key_inactive',
      owners: { virtualKeyId: inactive.id, virtualKeyName: 'off' },
    });
    const expiring = await createKey({
      name: 'expiring',
      provider_configs: openaiOnly,
      expires_at: '2026-11-22T11:00:00Z',
    });
    await expect(core.authorize(request(expiring.value))).resolves.toBeDefined();
    clock.now = Date.parse('2026-11-22T11:00:00Z');
    expect(await rejection(core.authorize(request(expiring.value)))).toMatchObject({
      type: 'virtual_key_expired',
    });
    expect(await core.manage({ action: 'get', collection: 'virtual-keys', id: expiring.id })).toMatchObject({
      name: 'expiring',
    });
    expect(await rejection(core.authorize(request('sk-gw-unknown')))).toMatchObject({
      type: 'virtual_key_invalid',
    });
  });

  it('rotates a key: the old value stops working, the new one works', async () => {
    const { core, createKey, request } = await setup(create);
    const key = await createKey({ name: 'rotating', provider_configs: openaiOnly });
    const rotated = await core.manage({ action: 'rotate', collection: 'virtual-keys', id: key.id });
    expect(rotated.value).toMatch(/^sk-gw-[0-9a-f]{40}$/);
    expect(await rejection(core.authorize(request(key.value)))).toMatchObject({
      type: 'virtual_key_invalid',
    });
    await expect(core.authorize(request(rotated.value))).resolves.toMatchObject({ virtualKeyId: key.id });
    const shown = await core.manage({ action: 'get', collection: 'virtual-keys', id: key.id });
    expect(JSON.stringify(shown)).not.toContain(rotated.value);
    expect(shown).not.toHaveProperty('value_hash');
  });
});

describe('GovernanceCore over a Redis that lost its data', () => {
  it("writes the config file's key again, which this replica still held in memory, and serves it", async () => {
    const prefix = `gw-test:gov:${randomUUID()}:`;
    prefixes.push(prefix);
    const value = `sk-gw-${'7'.repeat(40)}`;
    const logger = { ...silentLogger(), warn: vi.fn(), error: vi.fn() };
    const { core, store, request } = await setup(() => RedisStore.connect({ url: REDIS_URL, prefix }), {
      governance: {
        virtual_keys: [{ id: 'vk-file', name: 'file', value, provider_configs: [{ provider: 'openai' }] }],
      },
      logger: logger as unknown as ReturnType<typeof silentLogger>,
    });
    await expect(core.authorize(request(value))).resolves.toMatchObject({ virtualKeyId: 'vk-file' });
    const redis = new Redis(REDIS_URL);
    try {
      // A Redis restarted without persistence: nothing of this gateway's is left, the epoch marker included.
      await redis.del(...(await redis.keys(`${prefix}*`)));
      expect(await store.get('gov:virtual-keys', 'vk-file')).toBeUndefined();
      // The change follower checks every second; the reseed must write the key to the store itself.
      await vi.waitFor(async () => expect(await store.get('gov:virtual-keys', 'vk-file')).toBeDefined(), {
        timeout: 10_000,
        interval: 100,
      });
      expect(await store.get('gov:virtual-key-hashes', hashVirtualKey(value))).toBe('vk-file');
      await expect(core.authorize(request(value))).resolves.toMatchObject({ virtualKeyId: 'vk-file' });
      // The loss is reported once, and the reseed went through at its first try (a failed one warns).
      expect(logger.error.mock.calls.map((call) => String(call[1]))).toEqual([
        expect.stringContaining('lost its data'),
      ]);
      expect(logger.warn).not.toHaveBeenCalled();
    } finally {
      redis.disconnect();
      await core.close();
    }
  }, 20_000);
});
