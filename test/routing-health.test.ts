// Routing health (issue 12), in both modes (the cluster with two router replicas): keys and providers are
// classified by the error rate every replica measures, shared through the store; a Failed key or provider gets
// no traffic but its probes while another can serve, recovers, and regains its share; the view is the same on
// every replica and in governance (which weighs a key's provider configs); per-provider concurrency drops the
// excess with 503 request_dropped.

import { RouterClient } from '@gw/router/client';
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedCluster,
  type LaunchedGateway,
  pauseForNegativeCheck,
  scaled,
  startCluster,
  startEmbedded,
  startFakeUpstream,
  TEST_GRPC_SECURITY,
  testGrpcClientSettings,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'health-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const VK = 'sk-gw-health0000000000000000000000000000000000000';
const DEAD_VK = 'sk-gw-deadhalf00000000000000000000000000000000000';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({
        config,
        adminToken: ADMIN_TOKEN,
        replicas: { router: 2 },
        // The test's own token: it asks each router replica for its health itself (replicaViews).
        env: { GW_CLUSTER_TOKEN: TEST_GRPC_SECURITY.token },
      }),
  ],
] as const;

/**
 * What each router replica reports, asked of each one over gRPC (a cluster), or the one gateway's view. The
 * admin's calls go round robin over the replicas its pool admits, so four answers from it may all come from one
 * replica when the machine is busy: "every replica" is checked here instead.
 */
async function replicaViews<View>(gateway: LaunchedGateway, adminView: () => Promise<View>): Promise<View[]> {
  if (gateway.mode !== 'cluster') return [await adminView()];
  return Promise.all(
    (gateway as LaunchedCluster).ports.router.map(async (port) => {
      const client = new RouterClient(testGrpcClientSettings(`127.0.0.1:${port}`));
      try {
        return (await client.health()) as View;
      } finally {
        client.close();
      }
    }),
  );
}

interface Dial {
  /** Every nth request to the flaky key fails with a 500 (0: none does). */
  flakyEvery: number;
  flakySeen: number;
  /** The slow key answers once this resolves (a test holds it to keep the provider's places taken). */
  slowHeld: Promise<void>;
}

/**
 * At most one probe per interval per replica, counted over how long the traffic took (not over how long it
 * takes on an idle machine: a busy one spreads the same requests over more intervals).
 */
function mostProbes(options: { replicas: number; startedAt: number; intervalMs: number }): number {
  return options.replicas * (Math.floor((Date.now() - options.startedAt) / options.intervalMs) + 1);
}

/** One OpenAI-format fake for every key and provider, answering by the credential it is sent. */
async function startDialedUpstream(dial: Dial): Promise<FakeUpstream> {
  const failure = { status: 500, json: { error: { message: 'upstream broke', type: 'server_error' } } };
  return startFakeUpstream([
    {
      method: 'POST',
      path: /\/chat\/completions$/,
      answer: (request) => {
        const credential = String(request.headers.authorization ?? '');
        if (credential.endsWith('sk-down')) return failure;
        if (credential.endsWith('sk-slow')) {
          return {
            respond: async (response) => {
              await dial.slowHeld;
              response.writeHead(200, { 'content-type': 'application/json' });
              response.end(JSON.stringify(chatCompletion()));
            },
          };
        }
        if (credential.endsWith('sk-flaky')) {
          dial.flakySeen++;
          if (dial.flakyEvery > 0 && dial.flakySeen % dial.flakyEvery === 0) return failure;
        }
        return { json: chatCompletion() };
      },
    },
  ]);
}

describe.each(MODES)('routing health (%s)', (mode, start) => {
  const dial: Dial = { flakyEvery: 10, flakySeen: 0, slowHeld: Promise.resolve() };
  const replicas = mode === 'cluster' ? 2 : 1;
  const PROBE_INTERVAL_MS = 1_000;
  let upstream: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    upstream = await startDialedUpstream(dial);
    const network = { base_url: upstream.url, max_retries: 0 };
    gateway = await start({
      providers: {
        openai: {
          keys: [
            { id: 'good', value: 'sk-good' },
            { id: 'flaky', value: 'sk-flaky' },
          ],
          network_config: network,
        },
        mistral: { keys: [{ id: 'down', value: 'sk-down' }], network_config: network },
        groq: {
          keys: [{ id: 'slow', value: 'sk-slow' }],
          network_config: { ...network, concurrency: 1, buffer_size: 0, drop_excess_requests: true },
        },
      },
      governance: {
        virtual_keys: [
          {
            id: 'vk-weighted',
            name: 'weighted',
            value: VK,
            provider_configs: [
              { provider: 'openai', weight: 0.5, allowed_models: ['*'] },
              { provider: 'mistral', weight: 0.5, allowed_models: ['*'] },
            ],
          },
        ],
      },
      load_balancer: {
        recompute_interval_ms: 200,
        window_ms: 20_000,
        bucket_ms: 500,
        min_samples: 20,
        probe_interval_ms: PROBE_INTERVAL_MS,
        recovery_ms: 2_000,
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const chat = (model: string, headers: Record<string, string> = {}) =>
    post(
      `${gateway.url}/v1/chat/completions`,
      { model, messages: [{ role: 'user', content: 'hi' }] },
      { headers },
    );
  const keyOf = (index: number) => String(upstream.requests[index]?.headers.authorization ?? '').slice(7);
  /** The keys that served the requests the upstream received from `from` on. */
  const keysSince = (from: number) =>
    upstream.requests.slice(from).map((request) => keyOf(upstream.requests.indexOf(request)));
  const healthOf = async () => {
    const answer = await get(`${gateway.adminUrl}/api/health/providers`, ADMIN);
    expect(answer.status).toBe(200);
    return answer.body as Array<{
      provider: string;
      state: string;
      requests: number;
      keys: Array<{ id: string; state: string; requests: number; failures: number }>;
    }>;
  };
  const keyState = async (id: string) =>
    (await healthOf()).find((provider) => provider.provider === 'openai')?.keys.find((key) => key.id === id)
      ?.state;

  it('lists every configured provider and key before its first call, untried and healthy', async () => {
    // Issue 42: a provider added a moment ago was missing from the view until it had served traffic.
    const groq = (await healthOf()).find((provider) => provider.provider === 'groq');
    expect(groq).toMatchObject({ state: 'healthy', requests: 0, keys: [{ id: 'slow', state: 'healthy' }] });
  });

  it('a key at 10 % errors is Failed on every replica, gets only probes, then recovers and regains its share', {
    timeout: scaled(60_000),
  }, async () => {
    // Both keys healthy: about half each.
    dial.flakyEvery = 0;
    const before = upstream.requests.length;
    for (let index = 0; index < 100; index++) await chat('openai/gpt-4o');
    const flakyShare = keysSince(before).filter((key) => key === 'sk-flaky').length / 100;
    expect(flakyShare).toBeGreaterThan(0.3);
    expect(flakyShare).toBeLessThan(0.7);
    // One request in ten to the flaky key fails: Failed once its window holds enough of them. Traffic goes on
    // until it is: where the requests take longer than on an idle machine, a key Failed early in them has its
    // probes succeed (nine in ten do) and is back before they end, to be Failed again by what follows.
    dial.flakyEvery = 10;
    for (let index = 0; index < 200; index++) await chat('openai/gpt-4o');
    await waitFor(
      async () => {
        if ((await keyState('flaky')) === 'failed') return true;
        await Promise.all([0, 1, 2, 3].map(() => chat('openai/gpt-4o')));
        return false;
      },
      { timeoutMs: 5_000, what: 'the flaky key Failed' },
    );
    // Broken for good now: its probes fail too, so it stays Failed.
    dial.flakyEvery = 1;

    // Every replica answers the same within a recompute period (each router asked itself: the replica that
    // answered above may have recomputed a moment before the others).
    const states = (view: Awaited<ReturnType<typeof healthOf>>) => {
      const openai = view.find((provider) => provider.provider === 'openai')!;
      return ['flaky', 'good'].map((id) => openai.keys.find((key) => key.id === id)?.state).join(',');
    };
    // At 10 % errors a replica may have seen the key recover (its successes after the failure) before it broke
    // for good, and only requests tell it otherwise: traffic goes on while the replicas converge (these requests
    // may fail: a recovering key serves first attempts), and the view must hold for two recompute periods.
    const agreed = async () =>
      (await replicaViews(gateway, healthOf)).every((view) => states(view) === 'failed,healthy');
    const agreedTwice = async () => {
      await Promise.all([0, 1, 2, 3].map(() => chat('openai/gpt-4o')));
      if (!(await agreed())) return false;
      // Negative check: no replica flips back within two recompute periods (200 ms each).
      await pauseForNegativeCheck(500);
      return agreed();
    };
    await waitFor(agreedTwice, {
      timeoutMs: 10_000,
      what: 'every replica to see the flaky key Failed and the good one healthy, twice 500 ms apart',
    });

    const failedFrom = upstream.requests.length;
    const failedAt = Date.now();
    for (let index = 0; index < 100; index++) {
      const a = await chat('openai/gpt-4o');
      expect(a.status, JSON.stringify(a.body)).toBe(200 as number);
    }
    const probes = keysSince(failedFrom).filter((key) => key === 'sk-flaky').length;
    // One probe per second per replica at most (the 100 requests take a second or two when the machine is idle).
    expect(probes).toBeLessThanOrEqual(
      mostProbes({ replicas, startedAt: failedAt, intervalMs: PROBE_INTERVAL_MS }),
    );

    dial.flakyEvery = 0;
    await waitFor(
      async () => {
        await Promise.all([0, 1, 2, 3].map(() => chat('openai/gpt-4o')));
        return (await keyState('flaky')) === 'healthy';
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the flaky key healthy again' },
    );
    const healthyFrom = upstream.requests.length;
    for (let index = 0; index < 200; index++) await chat('openai/gpt-4o');
    const regained = keysSince(healthyFrom).filter((key) => key === 'sk-flaky').length / 200;
    expect(regained).toBeGreaterThan(0.25);
  });

  it("a Failed provider of a key's weighted configs gets only probes; the other serves", {
    timeout: scaled(60_000),
  }, async () => {
    dial.flakyEvery = 0;
    for (let index = 0; index < 60; index++) {
      const answer = await chat('gpt-4o', { 'x-gw-vk': VK });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    // Every router replica holds mistral Failed, each asked itself: the router that executes a plan puts a Failed
    // target behind the others whatever governance planned (governance weighs the configs by the routers'
    // shared view, from the store in the cluster), and sends it only its probes.
    await waitFor(
      async () =>
        (await replicaViews(gateway, healthOf)).every(
          (view) => view.find((provider) => provider.provider === 'mistral')?.state === 'failed',
        ),
      { timeoutMs: 5_000, what: 'every replica to hold mistral Failed' },
    );
    const from = upstream.requests.length;
    const startedAt = Date.now();
    for (let index = 0; index < 100; index++)
      expect((await chat('gpt-4o', { 'x-gw-vk': VK })).status).toBe(200 as number);
    const toMistral = keysSince(from).filter((key) => key === 'sk-down').length;
    expect(toMistral).toBeLessThanOrEqual(mostProbes({ replicas, startedAt, intervalMs: PROBE_INTERVAL_MS }));
    expect(keysSince(from).filter((key) => key !== 'sk-down').length).toBe(100);
  });

  it('drops what exceeds a provider’s concurrency with 503 request_dropped', async () => {
    // The upstream holds what it serves until the others have been dropped: on a busy machine five requests
    // sent at once may reach the router further apart than any fixed slowness of the upstream.
    let release = () => {};
    dial.slowHeld = new Promise((resolve) => {
      release = resolve;
    });
    const from = upstream.requests.length;
    let droppedSoFar = 0;
    const sent = [0, 1, 2, 3, 4].map(() =>
      chat('groq/llama-3.1-8b-instant').then((answer) => {
        if (answer.status === 503) droppedSoFar++;
        return answer;
      }),
    );
    await waitFor(() => keysSince(from).filter((key) => key === 'sk-slow').length + droppedSoFar === 5, {
      what: 'every request served upstream or dropped',
    }).finally(release);
    const answers = await Promise.all(sent);
    const served = answers.filter((answer) => answer.status === 200);
    const dropped = answers.filter((answer) => answer.status === 503);
    // One place per router replica.
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(mode === 'cluster' ? 2 : 1);
    expect(dropped.length).toBe(5 - served.length);
    for (const answer of dropped) {
      expect(answer.body).toMatchObject({ error: { type: 'request_dropped' }, status_code: 503 });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
  });

  it('shows and changes the load balancer config, refusing a bad one with the field named', async () => {
    const read = await get(`${gateway.adminUrl}/api/load-balancer/config`, ADMIN);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ enabled: true, min_samples: 20, failed_error_rate: 0.05 });
    const bad = await call(
      'PUT',
      `${gateway.adminUrl}/api/load-balancer/config`,
      { failed_error_rate: 2 },
      ADMIN,
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('failed_error_rate');
    const unknown = await call(
      'PUT',
      `${gateway.adminUrl}/api/load-balancer/config`,
      { colour: 'red' },
      ADMIN,
    );
    expect(unknown.status).toBe(400);
    const changed = await call(
      'PUT',
      `${gateway.adminUrl}/api/load-balancer/config`,
      { min_samples: 50, score_weights: { latency: 0.1, momentum: 0.25 } },
      ADMIN,
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      min_samples: 50,
      score_weights: { error_rate: 0.5, latency: 0.1, utilization: 0.15, momentum: 0.25 },
    });
    expect((await get(`${gateway.adminUrl}/api/load-balancer/config`, ADMIN)).body).toMatchObject({
      min_samples: 50,
    });
    expect((await get(`${gateway.adminUrl}/api/load-balancer/config`)).status).toBe(401);
  });

  it.skipIf(mode === 'cluster')(
    'exports the states and drops as metrics (skipped in the cluster: each router exports them on its own metrics port)',
    async () => {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      expect(text).toMatch(/gw_target_health_state\{[^}]*provider="mistral"[^}]*kind="provider"[^}]*\} 0/);
      expect(text).toMatch(/gw_target_health_state\{[^}]*kind="key"[^}]*target="good"[^}]*\} 1/);
      expect(text).toMatch(
        /gw_health_transitions_total\{[^}]*provider="openai"[^}]*kind="key"[^}]*to="failed"[^}]*\} [1-9]/,
      );
      expect(text).toMatch(
        /gw_dropped_requests_total\{[^}]*provider="groq"[^}]*reason="provider_queue_full"[^}]*\} [1-9]/,
      );
      expect(text).toMatch(/gw_provider_health\{[^}]*provider="mistral"[^}]*\} 0/);
    },
  );
});

interface Schedule {
  /** The `bad` provider's upstream answers (false: a 500 to everything). */
  badUp: boolean;
}

/**
 * Fast ejection, recovery that follows the probes, and health per (provider, key, model) (issue 26): a fake that
 * fails on a schedule: the `bad` provider always until it is switched back, and one model of openai always.
 */
async function startScheduledUpstream(schedule: Schedule): Promise<FakeUpstream> {
  const failure = { status: 500, json: { error: { message: 'upstream broke', type: 'server_error' } } };
  return startFakeUpstream([
    {
      method: 'POST',
      path: /\/chat\/completions$/,
      answer: (request) => {
        const credential = String(request.headers.authorization ?? '');
        const model = (request.body as { model?: string }).model;
        if (credential.endsWith('sk-bad') && !schedule.badUp) return failure;
        if (credential.endsWith('sk-main') && model === 'broken-model') return failure;
        return { json: chatCompletion({ model }) };
      },
    },
  ]);
}

describe.each(MODES)('fast ejection and health per target (%s)', (mode, start) => {
  const schedule: Schedule = { badUp: false };
  const replicas = mode === 'cluster' ? 2 : 1;
  const PROBE_INTERVAL_MS = 1_000;
  const RECOMPUTE_MS = 300;
  let upstream: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    upstream = await startScheduledUpstream(schedule);
    const network = { base_url: upstream.url, max_retries: 0 };
    const custom = { base_provider: 'openai' as const };
    gateway = await start({
      providers: {
        bad: {
          keys: [{ id: 'bad', value: 'sk-bad' }],
          network_config: network,
          custom_provider_config: custom,
        },
        openai: { keys: [{ id: 'main', value: 'sk-main' }], network_config: network },
        backup: {
          keys: [{ id: 'backup', value: 'sk-backup' }],
          network_config: network,
          custom_provider_config: custom,
        },
      },
      governance: {
        virtual_keys: [
          {
            id: 'vk-dead',
            name: 'dead-half',
            value: DEAD_VK,
            provider_configs: [
              { provider: 'bad', weight: 0.5, allowed_models: ['*'] },
              { provider: 'openai', weight: 0.5, allowed_models: ['*'] },
            ],
          },
        ],
      },
      load_balancer: {
        recompute_interval_ms: RECOMPUTE_MS,
        window_ms: 20_000,
        bucket_ms: 500,
        probe_interval_ms: PROBE_INTERVAL_MS,
        recovery_ms: 2_000,
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(
      `${gateway.url}/v1/chat/completions`,
      { messages: [{ role: 'user', content: 'hi' }], ...body },
      { headers },
    );
  const explicitBad = () => chat({ model: 'bad/gpt-4o-mini', fallbacks: ['openai/gpt-4o-mini'] });
  const weighted = () => chat({ model: 'gpt-4o-mini' }, { 'x-gw-vk': DEAD_VK });
  /** Upstream requests from `from` on, sent with the credential. */
  const callsWith = (from: number, credential: string) =>
    upstream.requests
      .slice(from)
      .filter((request) => String(request.headers.authorization ?? '').endsWith(credential));
  type View = Array<{
    provider: string;
    state: string;
    weight_multiplier: number;
    keys: Array<{ id: string; state: string }>;
    models: Array<{ model: string; state: string }>;
    targets: Array<{ key: string | null; model: string | null; state: string }>;
  }>;
  const view = async (): Promise<View> => {
    const answer = await get(`${gateway.adminUrl}/api/health/providers`, ADMIN);
    expect(answer.status).toBe(200);
    return answer.body as View;
  };
  /**
   * The probes a target ejected by requests since `startedAt` may have had: each replica's first comes an interval
   * after it ejected it, so none while the requests take under a second (on an idle machine).
   */
  const probesAfterEjection = (startedAt: number) =>
    replicas * Math.floor((Date.now() - startedAt) / PROBE_INTERVAL_MS);
  /** What every router replica reports, each asked itself (replicaViews). */
  const everyReplica = () => replicaViews(gateway, view);
  const providerState = (snapshot: View, provider: string) =>
    snapshot.find((report) => report.provider === provider)?.state;
  const modelState = (snapshot: View, provider: string, model: string) =>
    snapshot.find((report) => report.provider === provider)?.models.find((report) => report.model === model)
      ?.state;

  it('ejects a dead target after 5 failures in a row: no first attempts but its probes in a burst of 3×40, on every replica', {
    timeout: scaled(60_000),
  }, async () => {
    schedule.badUp = false;
    const from = upstream.requests.length;
    const started = Date.now();
    // An explicit target with a fallback: every request tries `bad` first until it is out.
    for (let index = 0; index < 8 * replicas; index++) {
      expect((await explicitBad()).status).toBe(200 as number);
    }
    // Out after 5 failures in a row on each replica (not after min_samples, 20, at more than 5 %), then only its
    // probes.
    expect(callsWith(from, 'sk-bad').length).toBeLessThanOrEqual(5 * replicas + probesAfterEjection(started));
    if (mode === 'embedded') {
      // At once: the state reported right after the fifth failure.
      const snapshot = await view();
      expect(providerState(snapshot, 'bad')).toBe('failed');
      expect(snapshot.find((report) => report.provider === 'bad')?.weight_multiplier).toBe(0);
    }
    await waitFor(
      async () => (await everyReplica()).every((snapshot) => providerState(snapshot, 'bad') === 'failed'),
      { timeoutMs: 3 * RECOMPUTE_MS, intervalMs: 50, what: 'every replica to report bad Failed' },
    );
    expect(Date.now() - started).toBeLessThan(scaled(5_000));

    // A burst of 3×40, weighted and explicit: `bad` gets its probes only (one per interval per replica).
    const burstFrom = upstream.requests.length;
    const burstStarted = Date.now();
    for (let batch = 0; batch < 3; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? weighted() : explicitBad())),
      );
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    const probes = callsWith(burstFrom, 'sk-bad').length;
    expect(probes).toBeLessThanOrEqual(
      mostProbes({ replicas, startedAt: burstStarted, intervalMs: PROBE_INTERVAL_MS }),
    );
    // A probe is a request of the burst: `bad` being down, it falls back to `main`, which serves all 120.
    expect(callsWith(burstFrom, 'sk-main').length).toBe(120);
  });

  it('recovers by its probes once the upstream answers again (weighted traffic only): recovering, then healthy, on every replica', {
    timeout: scaled(60_000),
  }, async () => {
    // Out on every replica first (by the test above; by enough failures when it ran alone).
    await waitFor(
      async () => {
        await explicitBad();
        return (await everyReplica()).every((snapshot) => providerState(snapshot, 'bad') === 'failed');
      },
      { timeoutMs: 10_000, intervalMs: 20, what: 'every replica to report bad Failed' },
    );
    schedule.badUp = true;
    const upAt = Date.now();
    // Only a key's weighted configs: governance plans `bad` as a fallback, the router sends it its probes.
    const trickle = async () => {
      for (const answer of await Promise.all([weighted(), weighted()])) expect(answer.status).toBe(200);
    };
    // Three probes in a row succeed (one per interval per replica): recovering without waiting for the window.
    await waitFor(
      async () => {
        await trickle();
        return (await everyReplica()).every((snapshot) => providerState(snapshot, 'bad') !== 'failed');
      },
      { timeoutMs: 8_000, intervalMs: 100, what: 'every replica to see bad recovering' },
    );
    const recoveringAfter = Date.now() - upAt;
    expect(recoveringAfter).toBeLessThan(scaled(3 * PROBE_INTERVAL_MS + 2 * RECOMPUTE_MS + 1_000));
    // The ramp (recovery_ms, 2 s) brings it back to healthy; it is not Failed again meanwhile.
    await waitFor(
      async () => {
        await trickle();
        const snapshots = await everyReplica();
        for (const snapshot of snapshots) expect(providerState(snapshot, 'bad')).not.toBe('failed');
        return snapshots.every((snapshot) => providerState(snapshot, 'bad') === 'healthy');
      },
      { timeoutMs: 8_000, intervalMs: 100, what: 'every replica to see bad healthy' },
    );
    const from = upstream.requests.length;
    for (let index = 0; index < 40; index++) expect((await weighted()).status).toBe(200 as number);
    expect(callsWith(from, 'sk-bad').length).toBeGreaterThan(8);
  });

  it('one failing model of a provider leaves its other models serving: the provider is not Failed', {
    timeout: scaled(60_000),
  }, async () => {
    const from = upstream.requests.length;
    const started = Date.now();
    for (let index = 0; index < 20; index++) {
      const answer = await chat({ model: 'openai/broken-model', fallbacks: ['backup/broken-model'] });
      expect(answer.status).toBe(200);
    }
    // Out after 5 failures in a row on each replica, then only its probes (as for a dead provider above).
    expect(callsWith(from, 'sk-main').length).toBeLessThanOrEqual(
      5 * replicas + probesAfterEjection(started),
    );
    await waitFor(
      async () =>
        (await everyReplica()).every(
          (snapshot) =>
            modelState(snapshot, 'openai', 'broken-model') === 'failed' &&
            providerState(snapshot, 'openai') === 'degraded' &&
            modelState(snapshot, 'openai', 'gpt-4o-mini') === 'healthy',
        ),
      { timeoutMs: 3 * RECOMPUTE_MS, intervalMs: 50, what: 'every replica to see only broken-model Failed' },
    );
    // Its healthy model is served by it, not moved to the fallback.
    const healthyFrom = upstream.requests.length;
    for (let index = 0; index < 20; index++) {
      const answer = await chat({ model: 'openai/gpt-4o-mini', fallbacks: ['backup/gpt-4o-mini'] });
      expect(answer.status).toBe(200);
    }
    expect(callsWith(healthyFrom, 'sk-main').length).toBe(20);
    expect(callsWith(healthyFrom, 'sk-backup').length).toBe(0);
    // Governance keeps weighing the provider in for that model (a key's weighted configs, bad healthy again).
    const weightedFrom = upstream.requests.length;
    // Its share is about a third (degraded against a healthy twin): 60 draws, so that fewer than 10 is a real
    // exclusion, not chance (20 draws with more than 3 failed about one run in twenty by chance alone).
    for (let index = 0; index < 60; index++) expect((await weighted()).status).toBe(200 as number);
    expect(callsWith(weightedFrom, 'sk-main').length).toBeGreaterThan(9);
    // The target itself is listed, on every replica.
    for (const snapshot of await everyReplica()) {
      const targets = snapshot.find((report) => report.provider === 'openai')?.targets ?? [];
      expect(targets).toContainEqual(
        expect.objectContaining({ key: 'main', model: 'broken-model', state: 'failed' }),
      );
    }
    if (mode === 'embedded') {
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      expect(text).toMatch(/gw_provider_health\{[^}]*provider="openai"[^}]*\} 0\.5/);
    }
  });
});
