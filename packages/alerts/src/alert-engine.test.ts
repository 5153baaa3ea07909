import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderHealthReport } from '@gw/shared/health';
import { MemoryStore } from '@gw/shared/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresLogStore } from '../../logs/src/postgres/postgres-log-store.ts';
import { SqliteLogStore } from '../../logs/src/sqlite/sqlite-log-store.ts';
import { logRecord } from '../../testkit/src/log-store-fixtures.ts';
import { createTestDatabase } from '../../testkit/src/postgres-database.ts';
import { AlertDispatcher } from './alert-dispatcher.ts';
import { AlertEngine } from './alert-engine.ts';
import { localLease } from './alert-lease.ts';
import { AlertRegistry } from './alert-registry.ts';
import {
  type AlertChannel,
  type AlertNotification,
  alertChannelSchema,
  alertRuleSchema,
} from './alert-schemas.ts';
import type { BudgetUsage, SecretFailure } from './alert-sources.ts';
import { ChannelSendError } from './channels/http-post.ts';
import type { ObservationSources } from './rule-observations.ts';

interface Sent {
  channel: string;
  notification: AlertNotification;
}

let store: MemoryStore;
let registry: AlertRegistry;
let sent: Sent[];
let clock: number;
let failNext: Array<ChannelSendError | Error>;
/** What the dispatcher reported of each notification (`gw_alert_notifications_total`). */
let outcomes: string[];

beforeEach(async () => {
  store = await MemoryStore.open();
  registry = new AlertRegistry({ store });
  sent = [];
  failNext = [];
  outcomes = [];
  clock = Date.UTC(2026, 5, 1, 12);
  await registry.putChannel(
    alertChannelSchema.parse({
      id: 'hook',
      type: 'webhook',
      url: 'http://127.0.0.1:9/x',
      secret: 'a-secret-of-16-chars',
    }),
  );
});

afterEach(async () => {
  await store.close();
});

function engineWith(
  sources: ObservationSources,
  options: { secretFailures?: (listener: (failure: SecretFailure) => void) => void } = {},
) {
  const dispatcher = new AlertDispatcher({
    registry,
    now: () => clock,
    backoffMs: 1,
    onOutcome: (channelType, outcome) => outcomes.push(`${channelType}:${outcome}`),
    send: async ({ channel, notification }: { channel: AlertChannel; notification: AlertNotification }) => {
      const failure = failNext.shift();
      if (failure) throw failure;
      sent.push({ channel: channel.id, notification });
    },
  });
  const engine = new AlertEngine({
    registry,
    dispatcher,
    sources,
    lease: localLease,
    intervalMs: 1_000,
    now: () => clock,
    ...(options.secretFailures && {
      secretFailures: {
        onSecretFailure: (listener) => {
          options.secretFailures!(listener);
          return () => {};
        },
      },
    }),
  });
  return {
    engine,
    dispatcher,
    /** One evaluation, and every send it queued finished. */
    async tick() {
      await engine.tick();
      await dispatcher.idle();
    },
  };
}

const rule = (fields: Record<string, unknown>) =>
  registry.putRule(alertRuleSchema.parse({ channels: ['hook'], ...fields }));

function healthReport(provider: string, state: ProviderHealthReport['state']): ProviderHealthReport {
  const target = {
    state,
    since: clock,
    score: 1,
    weight_multiplier: 1,
    requests: 100,
    failures: state === 'healthy' ? 0 : 30,
    error_rate: state === 'healthy' ? 0 : 0.3,
    latency_ms: { p50: 10, p95: 20, ewma: 12 },
    utilization: 0,
    momentum: 0,
    transitions: [],
  };
  return { provider, ...target, keys: [], models: [], targets: [] };
}

describe('provider health rule', () => {
  it('alerts once when a provider degrades, holds through a burst and recovery, resolves when healthy', async () => {
    let state: ProviderHealthReport['state'] = 'healthy';
    const { tick } = engineWith({
      health: { health: async () => [healthReport('openai', state), healthReport('anthropic', 'healthy')] },
    });
    await rule({ id: 'health', kind: 'provider_health' });
    await tick();
    expect(sent).toHaveLength(0);
    state = 'degraded';
    for (let evaluation = 0; evaluation < 5; evaluation += 1) {
      clock += 1_000;
      await tick();
    }
    state = 'failed';
    await tick();
    state = 'recovering';
    await tick();
    expect(sent.map(({ notification }) => [notification.action, notification.subject])).toEqual([
      ['trigger', 'openai'],
    ]);
    expect(sent[0]!.notification).toMatchObject({
      kind: 'provider_health',
      dedup_key: 'gw:health:openai',
      summary: 'Provider openai is degraded (error rate 30%)',
      details: { provider: 'openai', state: 'degraded' },
    });
    state = 'healthy';
    await tick();
    expect(sent.map(({ notification }) => notification.action)).toEqual(['trigger', 'resolve']);
    expect(sent[1]!.notification.dedup_key).toBe('gw:health:openai');
  });

  it('does not alert again within the cooldown when the provider flaps', async () => {
    let state: ProviderHealthReport['state'] = 'failed';
    const { tick } = engineWith({ health: { health: async () => [healthReport('openai', state)] } });
    await rule({ id: 'health', kind: 'provider_health', cooldown_ms: 60_000, notify_resolved: false });
    for (let flap = 0; flap < 6; flap += 1) {
      state = flap % 2 === 0 ? 'failed' : 'healthy';
      clock += 5_000;
      await tick();
    }
    expect(sent).toHaveLength(1);
    clock += 60_000;
    state = 'healthy';
    await tick();
    state = 'failed';
    await tick();
    expect(sent).toHaveLength(2);
  });
});

describe('budget threshold rule', () => {
  it('alerts once per threshold and period, for the highest threshold a jump crosses', async () => {
    const budget: BudgetUsage = {
      budget_id: 'b1',
      level: 'team',
      owner_id: 'team-1',
      max_limit: 10,
      used: 0,
      resets_at: '2026-07-01T00:00:00.000Z',
    };
    const { tick } = engineWith({ budgets: { budgets: async () => [budget] } });
    await rule({ id: 'budgets', kind: 'budget_threshold', cooldown_ms: 0 });
    const spendTo = async (used: number) => {
      budget.used = used;
      await tick();
    };
    for (const used of [1, 4.9, 5, 5.5, 6, 7.99, 8.5, 9, 9.99, 10, 12, 12]) await spendTo(used);
    expect(sent.map(({ notification }) => notification.details['threshold_percent'])).toEqual([50, 80, 100]);
    expect(sent[1]!.notification.summary).toBe('Budget b1 of team team-1 reached 80% ($8.5 of $10)');
    expect(sent[2]!.notification.dedup_key).toBe('gw:budgets:team:team-1:b1:2026-07-01T00:00:00.000Z:100');
    // The next period starts from nothing: a jump to 90% alerts once, for 80.
    budget.resets_at = '2026-08-01T00:00:00.000Z';
    await spendTo(0);
    await spendTo(9);
    await spendTo(9.5);
    expect(sent.map(({ notification }) => notification.details['threshold_percent'])).toEqual([
      50, 80, 100, 80,
    ]);
  });
});

/** The two request-log backends, each fresh per test: SQLite (embedded) and PostgreSQL (cluster). */
const LOG_STORES = [
  [
    'SqliteLogStore',
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'gw-alerts-'));
      const store = await SqliteLogStore.open({ dataDir });
      return {
        store,
        close: async () => {
          await store.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'PostgresLogStore',
    async () => {
      const database = await createTestDatabase();
      const store = await PostgresLogStore.open({ url: database.url });
      return {
        store,
        close: async () => {
          await store.close();
          await database.drop();
        },
      };
    },
  ],
] as const;

describe.each(LOG_STORES)('window rules over a real %s', (_name, open) => {
  let logs: SqliteLogStore | PostgresLogStore;
  let closeLogs: () => Promise<void>;
  beforeEach(async () => {
    const opened = await open();
    logs = opened.store;
    closeLogs = opened.close;
  });
  afterEach(async () => {
    await closeLogs();
  });

  const insert = (
    count: number,
    fields: { status: number; provider: string; latency_ms?: number },
    offsetMs = 0,
  ) =>
    logs.insert(
      Array.from({ length: count }, (_, index) =>
        logRecord({
          id: `${fields.provider}-${fields.status}-${offsetMs}-${index}`,
          time: clock - 60_000 + offsetMs + index,
          model: 'm',
          ...fields,
        }),
      ),
    );

  it('error rate per provider fires past the threshold, only with enough requests, and resolves', async () => {
    const { tick } = engineWith({ logs });
    await rule({
      id: 'errors',
      kind: 'error_rate',
      threshold: 0.1,
      window_ms: 300_000,
      min_requests: 20,
      per_provider: true,
    });
    await insert(8, { status: 200, provider: 'openai' });
    await insert(4, { status: 500, provider: 'openai' });
    await tick();
    expect(sent).toHaveLength(0); // 33% errors, but 12 requests say nothing yet
    await insert(20, { status: 200, provider: 'openai' }, 1_000);
    await insert(30, { status: 200, provider: 'anthropic' });
    await tick();
    expect(
      sent.map(({ notification }) => [notification.subject, notification.details['error_rate']]),
    ).toEqual([['openai', 0.13]]);
    expect(sent[0]!.notification.summary).toBe(
      'Error rate 12.5% over the last 5 min (openai), threshold 10%',
    );
    await insert(30, { status: 200, provider: 'openai' }, 2_000);
    await tick();
    expect(sent.map(({ notification }) => [notification.action, notification.subject])).toEqual([
      ['trigger', 'openai'],
      ['resolve', 'openai'],
    ]);
  });

  it('latency percentile and guardrail blocks (446) over the window', async () => {
    const { tick } = engineWith({ logs });
    await rule({ id: 'slow', kind: 'latency', percentile: 'p95', threshold_ms: 1_000, min_requests: 5 });
    await rule({ id: 'blocks', kind: 'guardrail_blocks', threshold: 3 });
    await insert(10, { status: 200, provider: 'openai', latency_ms: 2_000 });
    await insert(2, { status: 446, provider: 'openai', latency_ms: 5 });
    await tick();
    expect(sent.map(({ notification }) => notification.rule_id)).toEqual(['slow']);
    await insert(1, { status: 446, provider: 'openai', latency_ms: 5 }, 500);
    await tick();
    expect(sent.map(({ notification }) => notification.rule_id)).toEqual(['slow', 'blocks']);
    expect(sent[1]!.notification.details).toMatchObject({ blocked: 3, threshold: 3 });
  });
});

describe('dropped requests and secret failures', () => {
  it('counts drops of the named reasons over the window', async () => {
    const drops = [
      { reason: 'buffer_full', count: 7 },
      { reason: 'invalid', count: 50 },
    ];
    const windows: unknown[] = [];
    const { tick } = engineWith({
      dropped: {
        dropped: async (query) => {
          windows.push(query);
          return { buckets: drops };
        },
      },
    });
    await rule({
      id: 'drops',
      kind: 'dropped_requests',
      threshold: 10,
      reasons: ['buffer_full'],
      window_ms: 60_000,
    });
    await tick();
    expect(sent).toHaveLength(0);
    expect(windows[0]).toEqual({ from: clock - 60_000, to: clock, bucket_ms: 60_000 });
    drops[0]!.count = 12;
    await tick();
    expect(sent[0]!.notification.details).toMatchObject({ dropped: 12, buffer_full: 12 });
  });

  it('alerts on a secret failure once per cooldown, whatever the burst', async () => {
    let emit: (failure: SecretFailure) => void = () => {};
    const { tick } = engineWith({}, { secretFailures: (listener) => (emit = listener) });
    await rule({ id: 'vault', kind: 'secret_failure', cooldown_ms: 600_000 });
    for (let failure = 0; failure < 20; failure += 1)
      emit({
        reference: 'vault.kv/openai#key',
        backend: 'hashicorp',
        error: 'permission denied',
        at: new Date(clock),
      });
    await tick();
    emit({
      reference: 'vault.kv/openai#key',
      backend: 'hashicorp',
      error: 'permission denied',
      at: new Date(clock),
    });
    await tick();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.notification.summary).toBe(
      'Secret vault.kv/openai#key could not be refreshed; the last good value stays in use',
    );
    clock += 600_000;
    emit({
      reference: 'vault.kv/openai#key',
      backend: 'hashicorp',
      error: 'permission denied',
      at: new Date(clock),
    });
    await tick();
    expect(sent).toHaveLength(2);
  });
});

describe('delivery', () => {
  it('retries a retryable failure, gives up on a final one, and records both in the history', async () => {
    let state: ProviderHealthReport['state'] = 'failed';
    const { tick } = engineWith({ health: { health: async () => [healthReport('openai', state)] } });
    await rule({ id: 'health', kind: 'provider_health' });
    failNext = [
      new ChannelSendError('the receiver answered 503', true),
      new ChannelSendError('the receiver answered 503', true),
    ];
    await tick();
    expect(sent).toHaveLength(1);
    failNext = [new ChannelSendError('the receiver answered 400', false)];
    state = 'healthy';
    clock += 1_000;
    await tick();
    const history = await registry.history({ limit: 10 });
    expect(history.entries.map(({ action, outcome, attempts }) => ({ action, outcome, attempts }))).toEqual([
      { action: 'resolve', outcome: 'failed', attempts: 1 },
      { action: 'trigger', outcome: 'sent', attempts: 3 },
    ]);
    expect(history.entries[0]!.error).toBe('the receiver answered 400');
    expect(outcomes).toEqual(['webhook:sent', 'webhook:failed']);
  });

  it('bounds the queue: past it a notification is dropped and counted, and evaluation goes on', async () => {
    const dispatcher = new AlertDispatcher({
      registry,
      maxQueued: 2,
      concurrency: 1,
      send: () => new Promise(() => {}),
      onOutcome: (channelType, outcome) => outcomes.push(`${channelType}:${outcome}`),
    });
    const [channel] = await registry.listChannels();
    const note = {
      action: 'test',
      rule_id: 'r',
      kind: 'test',
      subject: 's',
      severity: 'info',
      summary: 's',
      dedup_key: 'd',
      time: 0,
      details: {},
    } as const;
    const accepted = Array.from({ length: 5 }, () => dispatcher.enqueue(note, [channel!]));
    // One running, two waiting; the other two dropped.
    expect(accepted).toEqual([true, true, true, false, false]);
    expect(dispatcher.dropped).toBe(2);
    expect(outcomes).toEqual(['webhook:dropped', 'webhook:dropped']);
  });

  it('pages the history newest first with a cursor, and keeps it bounded', async () => {
    const small = new AlertRegistry({ store, historyLimit: 10 });
    for (let index = 0; index < 25; index += 1) {
      await small.appendHistory({
        time: 1_000 + index,
        rule_id: 'r',
        channel_id: 'c',
        channel_type: 'webhook',
        action: 'trigger',
        subject: `s${index}`,
        summary: '',
        outcome: 'sent',
        attempts: 1,
      });
    }
    const first = await small.history({ limit: 4 });
    expect(first.entries.map((entry) => entry.subject)).toEqual(['s24', 's23', 's22', 's21']);
    const second = await small.history({ limit: 100, cursor: first.next_cursor! });
    expect(second.next_cursor).toBeNull();
    expect(first.entries.length + second.entries.length).toBe(10);
  });
});
