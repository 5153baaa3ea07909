import { randomUUID } from 'node:crypto';
import { GatewayError, parseGatewayConfig, type RoutingDecision } from '@gw/shared';
import type { TargetSignals } from '@gw/shared/health';
import { MemoryStore, RedisStore, type Store } from '@gw/shared/store';
import { capturedLogger } from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { liveGovernance } from '../../testing/live-governance.ts';
import { GovernanceCore } from '../governance-core.ts';
import type { AuthorizeRequest } from '../governance-service.ts';
import type { HealthView } from '../plan-targets.ts';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const stores: Store[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
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
      const prefix = `gw-test:routing:${randomUUID()}:`;
      prefixes.push(prefix);
      return RedisStore.connect({ url: REDIS_URL, prefix });
    },
  ],
];

/** Signals a test sets per `provider/model`; everything else healthy and unmeasured. */
function healthDouble(signals: Record<string, Partial<TargetSignals>> = {}): HealthView {
  const of = (id: string): TargetSignals => ({
    state: 'healthy',
    latencyP95Ms: undefined,
    ttftP95Ms: undefined,
    inflight: 0,
    requestsPerMinute: 0,
    tokensPerMinute: 0,
    headroom: undefined,
    ...signals[id.slice(2)],
  });
  return {
    signals: of,
    stateOf: (id) => of(id).state,
    weigh: (candidates) => ({
      weights: candidates.map((candidate) =>
        candidate.ids.some((id) => of(id).state === 'failed') ? 0 : candidate.weight,
      ),
      probe: undefined,
    }),
  };
}

async function setup(
  create: () => Promise<Store>,
  options: { health?: HealthView; governance?: object } = {},
) {
  const store = await create();
  stores.push(store);
  const logger = capturedLogger();
  const config = parseGatewayConfig({
    governance: {
      pricing: {
        'cheap-model': { input: 0.1, output: 0.4, cached_input: 0.01, context_window: 8_000 },
        'dear-model': { input: 3, output: 15, cached_input: 0.3, context_window: 200_000 },
        'mid-model': { input: 1, output: 4, context_window: 100_000 },
      },
      settings: { sweep_interval_ms: 0 },
      ...options.governance,
    },
  });
  const core = await GovernanceCore.start({
    store,
    logger: logger.logger,
    ...liveGovernance(config),
    health: options.health,
    random: () => 0,
  });
  const manage = core.manage.bind(core);
  const create_ = async (collection: string, body: object) =>
    (await manage({ action: 'create', collection, body })) as { id: string; value?: string };
  const team = await create_('teams', { name: 'research', metadata: { tier: 'gold' } });
  const key = await create_('virtual-keys', {
    name: 'app',
    team_id: team.id,
    metadata: { env: 'prod' },
    rate_limit: { request_max_limit: 100 },
    provider_configs: [
      { provider: 'openai', allowed_models: ['*'] },
      { provider: 'anthropic', allowed_models: ['dear-model', 'mid-model'] },
    ],
  });
  const request = (overrides: Partial<AuthorizeRequest> = {}, routing: object = {}): AuthorizeRequest => ({
    requestId: randomUUID(),
    kind: 'llm',
    virtualKey: key.value!,
    headerNames: [],
    targets: [{ provider: 'openai', model: 'cheap-model' }],
    estimate: { promptTokens: 100 },
    routing: { requestType: 'chat', stream: false, headers: {}, params: {}, ...routing },
    ...overrides,
  });
  const rule = (body: object) => create_('routing-rules', body);
  return { core, store, logger, team, key, request, rule, manage };
}

const ruleOf = (decision: RoutingDecision | undefined) => decision?.rule?.name ?? null;
const planned = (targets: Array<{ provider: string; model: string }>) =>
  targets.map((target) => `${target.provider}/${target.model}`);

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe.each(backends)('routing rules over the %s store', (_name, create) => {
  it('refuses at write an expression that does not compile, naming its line and column, and a scope that names nothing', async () => {
    const { rule } = await setup(create);
    const broken = await refusal(
      rule({
        name: 'broken',
        cel_expression: 'model == "x" &&\n  nonsense > 1',
        targets: [{ provider: 'openai', model: 'cheap-model' }],
      }),
    );
    expect(broken).toMatchObject({ type: 'invalid_request', status: 400, param: 'cel_expression' });
    expect(broken.message).toBe('cel_expression: Unknown variable: nonsense (line 2, column 3)');
    const notBool = await refusal(
      rule({ name: 'n', cel_expression: 'tokens + 1', targets: [{ provider: 'openai', model: 'm' }] }),
    );
    expect(notBool.message).toBe('cel_expression: must be a bool expression, not int');
    const orphan = await refusal(
      rule({
        name: 'orphan',
        cel_expression: 'true',
        scope: 'team',
        scope_id: 'team-nobody',
        targets: [{ provider: 'openai', model: 'cheap-model' }],
      }),
    );
    expect(orphan).toMatchObject({
      param: 'scope_id',
      message: "scope_id: teams 'team-nobody' does not exist",
    });
    const unscoped = await refusal(
      rule({ name: 'u', cel_expression: 'true', scope: 'team', targets: [{ provider: 'o', model: 'm' }] }),
    );
    expect(unscoped.message).toBe("scope_id: is required for scope 'team'");
  });

  it('takes the most specific scope first, then ascending priority; a disabled rule is not evaluated', async () => {
    const { core, rule, manage, request, team, key } = await setup(create);
    const target = (model: string) => [{ provider: 'openai', model }];
    await rule({ name: 'global-0', cel_expression: 'true', targets: target('global-model') });
    await rule({
      name: 'team-5',
      cel_expression: 'true',
      scope: 'team',
      scope_id: team.id,
      priority: 5,
      targets: target('team5'),
    });
    await rule({
      name: 'team-1',
      cel_expression: 'true',
      scope: 'team',
      scope_id: team.id,
      priority: 1,
      targets: target('team1'),
    });
    const keyRule = await rule({
      name: 'key-9',
      cel_expression: 'model == "cheap-model"',
      scope: 'virtual_key',
      scope_id: key.id,
      priority: 9,
      targets: target('key9'),
    });
    let result = await core.authorize(request());
    expect(ruleOf(result.routing)).toBe('key-9');
    expect(planned(result.targets)).toEqual(['openai/key9']);
    expect(result.routing).toMatchObject({
      rule: { id: keyRule.id, scope: 'virtual_key' },
      strategy: 'weighted',
    });

    await manage({ action: 'patch', collection: 'routing-rules', id: keyRule.id, body: { enabled: false } });
    result = await core.authorize(request());
    expect(ruleOf(result.routing)).toBe('team-1');
    // A rule whose expression is false passes the request on.
    result = await core.authorize(request({ targets: [{ provider: 'openai', model: 'other' }] }));
    expect(ruleOf(result.routing)).toBe('team-1');
  });

  it('reads every variable a rule may name', async () => {
    const { core, rule, request, team, manage } = await setup(create);
    const cases: Array<[string, Partial<AuthorizeRequest>, object]> = [
      ['headers["x-tier"] == "gold"', {}, { headers: { 'x-tier': 'gold' } }],
      ['params.temperature > 0.5', {}, { params: { temperature: 0.9 } }],
      ['key.metadata.env == "prod" && key.name == "app"', {}, {}],
      [`team.id == "${team.id}" && team.metadata.tier == "gold"`, {}, {}],
      ['customer.id == "" && user.name == "" && key.id != ""', {}, {}],
      ['tokens > 5000', { estimate: { promptTokens: 6000 } }, {}],
      ['model == "cheap-model" && provider == "openai"', {}, {}],
      ['request_type == "embeddings" && stream', {}, { requestType: 'embeddings', stream: true }],
      ['usage.key.requests_percent >= 5.0 && usage.requests_percent >= 5.0', {}, {}],
      ['targets["openai/via-variable"].state == "healthy" && stream', {}, { stream: true }],
    ];
    for (const [index, [expression, overrides, routing]] of cases.entries()) {
      const name = `case-${index}`;
      const created = await rule({
        name,
        cel_expression: expression,
        targets: [{ provider: 'openai', model: 'via-variable' }],
      });
      // Without what the expression looks for (a request without the key, for the key's own variables), the
      // request matches nothing.
      const without = /key|team|customer|usage/.test(expression)
        ? request({ virtualKey: undefined })
        : expression.startsWith('model')
          ? request({ targets: [{ provider: 'anthropic', model: 'mid-model' }] })
          : request();
      expect(ruleOf((await core.authorize(without)).routing), expression).toBeNull();
      expect(ruleOf((await core.authorize(request(overrides, routing))).routing), expression).toBe(name);
      await manage({ action: 'delete', collection: 'routing-rules', id: created.id });
    }
  });

  it('never routes around the key: a rule whose targets the key does not allow is skipped, with the reason', async () => {
    const { core, rule, request } = await setup(create);
    await rule({
      name: 'forbidden',
      cel_expression: 'true',
      targets: [
        { provider: 'anthropic', model: 'cheap-model' },
        { provider: 'mistral', model: 'x' },
      ],
    });
    await rule({
      name: 'partly',
      cel_expression: 'true',
      priority: 1,
      targets: [
        { provider: 'mistral', model: 'x' },
        { provider: 'anthropic', model: 'dear-model' },
      ],
      fallbacks: ['mistral/y', 'openai/cheap-model'],
    });
    const result = await core.authorize(request());
    expect(ruleOf(result.routing)).toBe('partly');
    expect(planned(result.targets)).toEqual(['anthropic/dear-model', 'openai/cheap-model']);
    expect(result.routing!.skipped_rules).toEqual([
      { id: expect.any(String), name: 'forbidden', reason: 'boundary' },
    ]);
    expect(result.routing!.candidates).toContainEqual(
      expect.objectContaining({ provider: 'mistral', model: 'x', skipped: 'boundary' }),
    );
  });

  it('skips a rule that fails at a request (logged once), never failing the request', async () => {
    const { core, rule, request, logger } = await setup(create);
    await rule({
      name: 'needs-header',
      cel_expression: 'headers["x-missing"] == "a"',
      targets: [{ provider: 'openai', model: 'x' }],
    });
    for (let index = 0; index < 3; index++) {
      const result = await core.authorize(request());
      expect(planned(result.targets)).toEqual(['openai/cheap-model']);
      expect(result.routing).toMatchObject({
        rule: null,
        skipped_rules: [{ name: 'needs-header', reason: 'error', error: 'No such key: x-missing' }],
      });
    }
    expect(
      logger.lines.filter((line) => line.includes('routing rule failed to evaluate; skipped')),
    ).toHaveLength(1);
  });

  it('keeps a rule from outliving its scope: deleting the team is a 409 naming it, a cascade deletes it', async () => {
    const { rule, team, manage } = await setup(create);
    const scoped = await rule({
      name: 'team-rule',
      cel_expression: 'true',
      scope: 'team',
      scope_id: team.id,
      targets: [{ provider: 'openai', model: 'x' }],
    });
    const refused = await refusal(manage({ action: 'delete', collection: 'teams', id: team.id }));
    expect(refused.type).toBe('conflict');
    expect(refused.message).toContain(`routing-rules '${scoped.id}' (scope_id)`);
    expect(refused.message).toContain('but the routing rules scoped to it');
    const deleted = await manage({ action: 'delete', collection: 'teams', id: team.id, cascade: true });
    expect(deleted.detached).toContainEqual({
      collection: 'routing-rules',
      id: scoped.id,
      field: 'scope_id',
    });
    await expect(manage({ action: 'get', collection: 'routing-rules', id: scoped.id })).rejects.toMatchObject(
      {
        type: 'not_found',
      },
    );
  });

  it('applies global rules to requests without a virtual key, and changes apply to the next request', async () => {
    const { core, rule, request, manage } = await setup(create);
    const anonymous = request({ virtualKey: undefined });
    expect(ruleOf((await core.authorize(anonymous)).routing)).toBeNull();
    const created = await rule({
      name: 'everyone',
      cel_expression: 'true',
      targets: [{ provider: 'groq', model: 'llama' }],
    });
    const result = await core.authorize(anonymous);
    expect(ruleOf(result.routing)).toBe('everyone');
    expect(planned(result.targets)).toEqual(['groq/llama']);
    await manage({ action: 'delete', collection: 'routing-rules', id: created.id });
    expect(ruleOf((await core.authorize(anonymous)).routing)).toBeNull();
  });

  it('skips a target whose context window is too small, and refuses a prompt no target can take', async () => {
    const { core, rule, request } = await setup(create);
    await rule({
      name: 'sized',
      cel_expression: 'true',
      targets: [{ provider: 'openai', model: 'cheap-model' }],
      fallbacks: ['anthropic/mid-model'],
    });
    const result = await core.authorize(request({ estimate: { promptTokens: 9_000 } }));
    expect(planned(result.targets)).toEqual(['anthropic/mid-model']);
    expect(result.routing!.candidates[0]).toMatchObject({
      provider: 'openai',
      model: 'cheap-model',
      skipped: 'context_window',
      detail: 'context window 8000 < prompt ≈ 9000 tokens',
    });
    const tooLarge = await refusal(core.authorize(request({ estimate: { promptTokens: 150_000 } })));
    expect(tooLarge).toMatchObject({ type: 'invalid_request', status: 400, code: 'context_length_exceeded' });
  });

  it('dry-runs a request: the decision and targets, nothing admitted', async () => {
    const { rule, key, manage } = await setup(create);
    await rule({
      name: 'tiered',
      cel_expression: 'headers["x-tier"] == "gold"',
      targets: [{ provider: 'anthropic', model: 'dear-model' }],
    });
    const dry = (await manage({
      action: 'dry-run',
      collection: 'routing-rules',
      body: { model: 'cheap-model', virtual_key_id: key.id, headers: { 'X-Tier': 'gold' } },
    })) as { decision: RoutingDecision; targets: unknown[] };
    expect(dry.decision.rule?.name).toBe('tiered');
    expect(dry.targets).toEqual([{ provider: 'anthropic', model: 'dear-model', keyIds: ['*'] }]);
    const usage = await manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    expect(usage.usage[0]!.entries).toContainEqual(expect.objectContaining({ kind: 'requests', used: 0 }));
    await expect(
      manage({ action: 'dry-run', collection: 'routing-rules', body: { model: 'x', unknown: 1 } }),
    ).rejects.toMatchObject({ type: 'invalid_request' });
    await expect(
      manage({ action: 'dry-run', collection: 'teams', body: { model: 'x' } }),
    ).rejects.toMatchObject({ message: 'only routing rules have a dry run' });
  });
});

describe('strategies', () => {
  const targets = [
    { provider: 'openai', model: 'cheap-model', weight: 1 },
    { provider: 'anthropic', model: 'dear-model', weight: 1 },
    { provider: 'openai', model: 'mid-model', weight: 1 },
  ];
  async function decide(strategy: string, health: HealthView, extra: object = {}, routing: object = {}) {
    const { core, rule, request } = await setup(() => MemoryStore.open(), { health });
    await rule({ name: strategy, cel_expression: 'true', strategy, targets, ...extra });
    return core.authorize(request({}, routing));
  }

  it('least_busy: fewest in flight first', async () => {
    const health = healthDouble({
      'openai/cheap-model': { inflight: 9 },
      'anthropic/dear-model': { inflight: 2 },
      'openai/mid-model': { inflight: 5 },
    });
    const result = await decide('least_busy', health);
    expect(planned(result.targets)).toEqual([
      'anthropic/dear-model',
      'openai/mid-model',
      'openai/cheap-model',
    ]);
    expect(result.routing!.candidates[0]).toMatchObject({ score: -2, detail: '2 in flight' });
  });

  it('lowest_latency: recent time to first token, the unmeasured tried first', async () => {
    const health = healthDouble({
      'openai/cheap-model': { ttftP95Ms: 900, latencyP95Ms: 3000 },
      'anthropic/dear-model': { latencyP95Ms: 400 },
    });
    const result = await decide('lowest_latency', health);
    expect(planned(result.targets)).toEqual([
      'openai/mid-model',
      'anthropic/dear-model',
      'openai/cheap-model',
    ]);
  });

  it('lowest_cost: the estimate with cached-input prices; a Failed target goes behind, explained', async () => {
    const health = healthDouble({ 'openai/cheap-model': { state: 'failed' } });
    const result = await decide('lowest_cost', health);
    expect(planned(result.targets)).toEqual([
      'openai/mid-model',
      'anthropic/dear-model',
      'openai/cheap-model',
    ]);
    expect(result.routing!.candidates.at(-1)).toMatchObject({
      model: 'cheap-model',
      state: 'failed',
      skipped: 'health',
    });
  });

  it("lowest_cost: a long prompt compares the long-context tier's prices, as it will be billed", async () => {
    const { core, rule, request } = await setup(() => MemoryStore.open(), {
      governance: {
        pricing: {
          // Cheapest below 100k prompt tokens, dearest above.
          'tiered-model': { input: 1, output: 4, above: { tokens: 100_000, input: 10, output: 40 } },
          'flat-model': { input: 3, output: 12 },
        },
      },
    });
    await rule({
      name: 'cost',
      cel_expression: 'true',
      strategy: 'lowest_cost',
      targets: [
        { provider: 'openai', model: 'flat-model' },
        { provider: 'openai', model: 'tiered-model' },
      ],
    });
    const routed = async (promptTokens: number) =>
      core.authorize(request({ estimate: { promptTokens, maxCompletionTokens: 1_000 } }));
    const short = await routed(100_000);
    expect(planned(short.targets)).toEqual(['openai/tiered-model', 'openai/flat-model']);
    // 100k × $1 + 1k × $4 against 100k × $3 + 1k × $12.
    expect(short.routing!.candidates.map((candidate) => candidate.detail)).toEqual(['≈ $0.104', '≈ $0.312']);
    const long = await routed(100_001);
    expect(planned(long.targets)).toEqual(['openai/flat-model', 'openai/tiered-model']);
    expect(long.routing!.candidates.map((candidate) => candidate.score)).toEqual([-0.312003, -1.04001]);
  });

  it('usage: most headroom under the provider keys limits; none left goes behind', async () => {
    const health = healthDouble({
      'openai/cheap-model': { headroom: 0 },
      'anthropic/dear-model': { headroom: 0.2 },
      'openai/mid-model': { headroom: 0.7 },
    });
    const result = await decide('usage', health);
    expect(planned(result.targets)).toEqual([
      'openai/mid-model',
      'anthropic/dear-model',
      'openai/cheap-model',
    ]);
    expect(result.routing!.candidates.at(-1)).toMatchObject({ skipped: 'limits' });
  });

  it('an objective: the cheapest within the bound, else the fastest', async () => {
    const health = healthDouble({
      'openai/cheap-model': { ttftP95Ms: 2500 },
      'anthropic/dear-model': { ttftP95Ms: 300 },
      'openai/mid-model': { ttftP95Ms: 1200 },
    });
    const within = await decide('lowest_cost', health, { objective: { max_ttft_p95_ms: 2000 } });
    expect(planned(within.targets)).toEqual([
      'openai/mid-model',
      'anthropic/dear-model',
      'openai/cheap-model',
    ]);
    expect(within.routing!.candidates.at(-1)).toMatchObject({
      skipped: 'objective',
      detail: 'ttft p95 2500 ms > 2000 ms',
    });
    const none = await decide('lowest_cost', health, { objective: { max_ttft_p95_ms: 100 } });
    expect(planned(none.targets)[0]).toBe('anthropic/dear-model');
  });

  it('cache_affinity: one prefix keeps its target, prefixes spread, and the plan carries the hash for the key choice', async () => {
    const health = healthDouble();
    const first = await decide('cache_affinity', health, {}, { affinity: 'a'.repeat(40) });
    const again = await decide('cache_affinity', health, {}, { affinity: 'a'.repeat(40) });
    expect(planned(again.targets)).toEqual(planned(first.targets));
    expect(first.targets.every((target) => target.affinity === 'a'.repeat(40))).toBe(true);
    const chosen = new Set<string>();
    for (let index = 0; index < 24; index++) {
      const result = await decide('cache_affinity', health, {}, { affinity: `conversation-${index}` });
      chosen.add(planned(result.targets)[0]!);
    }
    expect(chosen.size).toBe(3);
  });
});
