// Drills (issue 42): a cluster operated as operators operate it, under steady governed load, and nothing lost.
// Cluster only: the embedded gateway is one process, with no replica to scale, roll or start first.
//
// As Kubernetes does it (test/support/k8s-like.ts: each replica a process on a port declared up front, readiness
// probes, a client-side Service that sends only to ready ingress replicas, GW_DRAIN_DELAY_MS longer than the
// Service takes to let go; GW_GOVERNANCE_ADMISSION=remote, so that governance is on every request's path):
// - an ingress started before every other service is live but not ready until its routers, governance replicas
//   and store answer, and every request the Service sends it from then on is served;
// - every replica of every service is rolled one at a time (SIGTERM, exit, start, ready);
// - router, governance and ingress are each scaled 1 → 3 → 1.
// Through the local launcher (src/cluster.ts, admission local, as by default): every replica is SIGTERMed in
// turn and the launcher starts it again; with no load balancer and no drain delay, a client of an ingress that
// is down retries on the other ingress address.
//
// Each drill asserts: every answer 2xx (none failed, whatever the phase), each key charged exactly what was
// served (micro-dollars), the upstream called once per answer, and a key's request limit exact: bursts sent at
// each step of the drill on a key allowed N requests get exactly N served and every other one 429.
import { readdir, readFile } from 'node:fs/promises';
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedCluster,
  listenerPid,
  listeningPorts,
  startCluster,
  startFakeUpstream,
  waitFor,
} from '@gw/testkit';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientService, K8sLikeCluster, type Service } from './support/k8s-like.ts';
import { openReservations } from './support/reservations.ts';
import { charged } from './support/steady-load.ts';

const ADMIN_TOKEN = 'drills-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** What the fake answers (18 tokens) at $1,000 per million tokens either way: $0.018, in micro-dollars. */
const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
const ANSWER_MICROS = 18_000;
/** Clients sending back to back: the requests in flight, each held about ANSWER_DELAY_MS by the upstream. */
const CONCURRENCY = 24;
const ANSWER_DELAY_MS = 500;
/** Requests of the limited key sent at each step of a drill, and how many its limit allows in all. */
const BURST = 30;
/** The ingress's drain delay in the Kubernetes-like drills: ten polls of the client-side Service. */
const DRAIN_DELAY_MS = 2_000;

/** A key of the config file: a budget, a request limit, its value (`sk-gw-drill-<id>…`). */
function drillKey(id: string, requestLimit: number) {
  return {
    id,
    name: id,
    value: `sk-gw-drill-${id}`.padEnd(46, '0'),
    provider_configs: [{ provider: 'openai' }],
    budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
    rate_limit: { request_max_limit: requestLimit, request_reset_duration: '1d' },
  };
}

/** Each drill's keys: one its load runs on, one sent only in bursts whose limit it must cross exactly. */
const KEYS = {
  start: { load: drillKey('start-load', 1_000_000) },
  roll: { load: drillKey('roll-load', 1_000_000), limited: drillKey('roll-limited', 5 * BURST + 7) },
  scale: { load: drillKey('scale-load', 1_000_000), limited: drillKey('scale-limited', 5 * BURST + 7) },
  launcher: {
    load: drillKey('launcher-load', 1_000_000),
    limited: drillKey('launcher-limited', 4 * BURST + 7),
  },
};
type DrillKey = ReturnType<typeof drillKey>;

function config(fake: FakeUpstream): GatewayConfigInput {
  return {
    client: { enforce_virtual_keys: true },
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
    governance: {
      pricing: { 'gpt-4o-mini': { input: 1_000, output: 1_000 } },
      virtual_keys: Object.values(KEYS).flatMap((keys) => Object.values(keys)),
    },
  } as GatewayConfigInput;
}

/** One answer of the load: its status (0: no answer at all), its body when it was not 2xx, where it went. */
interface Answer {
  key: string;
  status: number;
  body: string;
  url: string;
  /** The first address refused or reset the connection, and the request was sent to another (launcher). */
  retried: boolean;
  /** The step of the drill under way when it was sent. */
  step: string;
}

const dispatcher = new Agent({ connections: 64 });
afterAll(() => dispatcher.close());

/** A chat completion on `key`; throws when no answer comes (a refused or reset connection). */
async function chat(url: string, key: DrillKey): Promise<Omit<Answer, 'retried' | 'step'>> {
  const response = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gw-vk': key.value },
    body: JSON.stringify(CHAT),
    dispatcher,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const body = await response.body.text();
  const ok = response.statusCode >= 200 && response.statusCode < 300;
  return { key: key.id, status: response.statusCode, body: ok ? '' : body.slice(0, 300), url };
}

/** How a drill's clients reach an ingress: one answer per request, failures included. */
type Send = (key: DrillKey) => Promise<Answer>;

/** CONCURRENCY clients sending on `key` back to back until `during` settles (its error is rethrown). */
async function underLoad<T>(
  send: Send,
  key: DrillKey,
  answers: Answer[],
  during: () => Promise<T>,
): Promise<T> {
  let running = true;
  const clients = Array.from({ length: CONCURRENCY }, async () => {
    while (running) answers.push(await send(key));
  });
  try {
    return await during();
  } finally {
    running = false;
    await Promise.all(clients);
  }
}

/** A burst on the limited key: BURST requests, ten at a time, sent while a step of a drill plays. */
async function burst(send: Send, key: DrillKey, answers: Answer[]): Promise<void> {
  let left = BURST;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (left-- > 0) answers.push(await send(key));
    }),
  );
}

/** Waits until `count` more answers have come than there are now (the load is flowing, not a fixed pause). */
const moreAnswers = (answers: Answer[], count: number) => {
  const target = answers.length + count;
  return waitFor(() => answers.length >= target, { timeoutMs: 60_000, what: `${count} more answers` });
};

/** The answers that are not 2xx, one line each (status, key, where, body), for a failure's message. */
function failures(answers: Answer[]): string[] {
  return answers
    .filter((answer) => answer.status < 200 || answer.status >= 300)
    .map((answer) => `${answer.status} ${answer.key} at ${answer.url} (${answer.step}): ${answer.body}`);
}

/** What the upstream had done when a drill began: requests received, responses abandoned by their caller. */
type UpstreamMark = { requests: number; aborted: number };
const markOf = (fake: FakeUpstream): UpstreamMark => ({
  requests: fake.requests.length,
  aborted: fake.abortedCount,
});

/**
 * What every drill asserts once its load has stopped: every answer of the load key 2xx and the limited key's
 * exactly its limit of 200s and 429s for the rest (what else came is printed, with `replicaOutput` for a clue);
 * the upstream called once per answer since `from`, none abandoned; every reservation settled, each key charged
 * exactly what it was served.
 */
async function assertServedAndCharged(options: {
  name: string;
  adminUrl: string;
  prefix: string;
  fake: FakeUpstream;
  from: UpstreamMark;
  load: { key: DrillKey; answers: Answer[] };
  limited?: { key: DrillKey; answers: Answer[] };
  replicaOutput?: () => string;
}): Promise<string> {
  const { load, limited, fake, name } = options;
  const unexpected = [
    ...failures(load.answers),
    ...failures(limited?.answers ?? []).filter((line) => !line.startsWith('429 ')),
  ];
  if (unexpected.length > 0) {
    console.error(
      `${name}: ${unexpected.length} failed\n${unexpected.join('\n')}\n${options.replicaOutput?.() ?? ''}`,
    );
  }
  expect(unexpected, `${name}: answers neither 2xx nor the limited key's 429`).toEqual([]);
  const served = load.answers.length;
  const limit = limited?.key.rate_limit.request_max_limit ?? 0;
  if (limited) {
    const statuses = new Map<number, number>();
    for (const answer of limited.answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    expect(Object.fromEntries(statuses), `${name}: the limited key's answers`).toEqual({
      200: limit,
      429: limited.answers.length - limit,
    });
  }
  expect(fake.abortedCount - options.from.aborted, `${name}: upstream calls abandoned`).toBe(0);
  expect(fake.requests.length - options.from.requests, `${name}: upstream calls`).toBe(served + limit);
  // Every reservation of this drill's keys settled (another drill's lost calls wait for the sweeper).
  const keyIds = new Set([load.key.id, ...(limited ? [limited.key.id] : [])]);
  const redis = new Redis(REDIS_URL);
  const open = async () =>
    (await openReservations(redis, options.prefix)).filter((stored) => {
      const plan = JSON.parse(stored.slice(stored.indexOf('\n') + 1)) as { virtualKeyId?: string };
      return keyIds.has(plan.virtualKeyId ?? '');
    }).length;
  await waitFor(async () => (await open()) === 0, {
    timeoutMs: 30_000,
    what: `every reservation of ${name} settled`,
  }).finally(() => redis.quit());
  const micros = async (key: DrillKey) => Math.round((await charged(options.adminUrl, key.id, ADMIN)) * 1e6);
  // What the settles spent in an ingress's slices shows once it renews them (each second: docs/governance.md
  // "What the reports show"): the charge is read until it is what was served, or the wait ends.
  const chargedOnceReported = async (key: DrillKey, expected: number) => {
    let last = Number.NaN;
    await waitFor(
      async () => {
        last = await micros(key);
        return last === expected;
      },
      {
        timeoutMs: 10_000,
        what: `${name}: the charges of ${key.id}`,
      },
    ).catch(() => {});
    return last;
  };
  expect(
    await chargedOnceReported(load.key, served * ANSWER_MICROS),
    `${name}: charged for ${served} served`,
  ).toBe(served * ANSWER_MICROS);
  if (limited)
    expect(
      await chargedOnceReported(limited.key, limit * ANSWER_MICROS),
      `${name}: charged for ${limit} served`,
    ).toBe(limit * ANSWER_MICROS);
  const bursts = limited
    ? `; limited key: ${limit} served, ${limited.answers.length - limit} refused 429`
    : '';
  return `${served} requests served${bursts}`;
}

/** A fake OpenAI whose answers take ANSWER_DELAY_MS (the requests in flight when a replica goes) and report USAGE. */
function startSlowFake(): Promise<FakeUpstream> {
  return startFakeUpstream([
    {
      method: 'POST',
      path: /\/chat\/completions$/,
      answer: () => ({ json: chatCompletion({ usage: USAGE }), delayMs: ANSWER_DELAY_MS }),
    },
  ]);
}

/** The last lines of a process's JSON log, each as its time, message and error (with its causes). */
function logLines(output: string): string {
  return output
    .split('\n')
    .filter(Boolean)
    .slice(-10)
    .map((line) => {
      try {
        const record = JSON.parse(line) as { time?: number; msg?: string; err?: { message?: string } };
        return `  ${record.time} ${record.msg ?? ''} ${record.err?.message ?? ''}`;
      } catch {
        return `  ${line.slice(0, 300)}`;
      }
    })
    .join('\n');
}

/** The step of the drill under way (answers are labelled with it). */
const drill = { step: 'warm-up' };

const seconds = (since: number) => ((performance.now() - since) / 1_000).toFixed(1);

describe('drills as Kubernetes runs them (each replica its own process, a client-side Service)', () => {
  let fake: FakeUpstream;
  let cluster: K8sLikeCluster;
  let service: ClientService;
  const slots = { ingress: 3, router: 3, governance: 3, 'mcp-runner': 1, admin: 1 };

  beforeAll(async () => {
    fake = await startSlowFake();
    cluster = await K8sLikeCluster.declare({
      config: config(fake),
      adminToken: ADMIN_TOKEN,
      slots,
      env: {
        GW_GOVERNANCE_ADMISSION: 'remote',
        GW_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
      },
    });
    service = new ClientService(cluster.ingressUrls);
  });
  afterAll(async () => {
    await service?.close();
    await cluster?.close();
    await fake?.close();
  });

  /** The last lines the ingress, router and governance replicas logged (LOG_LEVEL warn), for a failure's clue. */
  const replicaOutput = () =>
    (['ingress', 'router', 'governance'] as const)
      .flatMap((name) =>
        [0, 1, 2].map((slot) => `${name}[${slot}]:\n${logLines(cluster.outputOf(name, slot))}`),
      )
      .join('\n');

  const send: Send = async (key) => {
    const url = await service.pick();
    try {
      return { ...(await chat(url, key)), retried: false, step: drill.step };
    } catch (error) {
      return { key: key.id, status: 0, body: String(error), url, retried: false, step: drill.step };
    }
  };

  /** SIGTERM, exit 0, start, ready (and back among the Service's endpoints, for an ingress): a pod replaced. */
  async function replace(name: Service, slot: number, steps: string[]) {
    const startedAt = performance.now();
    expect(await cluster.stop(name, slot), `${name}[${slot}] exit code`).toBe(0);
    const stoppedAt = performance.now();
    cluster.start(name, slot);
    await cluster.ready(name, slot);
    if (name === 'ingress') {
      const url = cluster.ingressUrls[slot]!;
      await waitFor(() => service.ready().includes(url), { timeoutMs: 10_000, what: `${url} an endpoint` });
    }
    steps.push(`${name}[${slot}] stopped in ${seconds(startedAt)} s, back in ${seconds(stoppedAt)} s`);
  }

  it('an ingress started before every other service is not ready until they are, then serves every request', async () => {
    const startedAt = performance.now();
    cluster.start('ingress', 0);
    const base = cluster.ingressUrls[0]!;
    await waitFor(
      async () => (await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(1_000) })).status === 200,
      { timeoutMs: 60_000, intervalMs: 100, what: 'the ingress to listen' },
    );
    const alone = await fetch(`${base}/health/ready`);
    expect({ status: alone.status, body: await alone.json() }).toEqual({
      status: 503,
      body: {
        status: 'not_ready',
        checks: {
          router: 'no router replica connected',
          governance: 'no governance replica connected',
          store: 'ok',
        },
      },
    });
    // The load starts now: its clients wait for the Service's first endpoint, as clients of a Service whose
    // only pod is not ready get nowhere.
    const answers: Answer[] = [];
    const from = markOf(fake);
    let readyAfter = '';
    drill.step = 'ingress first';
    await underLoad(send, KEYS.start.load, answers, async () => {
      for (const name of ['governance', 'router'] as const)
        for (const slot of [0, 1]) cluster.start(name, slot);
      cluster.start('mcp-runner', 0);
      cluster.start('admin', 0);
      await cluster.ready('ingress', 0, 90_000);
      readyAfter = seconds(startedAt);
      await Promise.all(
        (['governance', 'router'] as const).flatMap((name) =>
          [0, 1].map((slot) => cluster.ready(name, slot)),
        ),
      );
      await cluster.ready('mcp-runner', 0);
      await cluster.ready('admin', 0);
      cluster.start('ingress', 1);
      await cluster.ready('ingress', 1);
      await moreAnswers(answers, 4 * CONCURRENCY);
    });
    const summary = await assertServedAndCharged({
      name: 'ingress first',
      adminUrl: cluster.adminUrl,
      prefix: cluster.prefix,
      replicaOutput,
      fake,
      from,
      load: { key: KEYS.start.load, answers },
    });
    console.info(
      `drill ingress first: ready ${readyAfter} s after its start; ${summary} in ${seconds(startedAt)} s`,
    );
  }, 240_000);

  it('every replica of every service rolled one at a time under load: nothing fails, charges and limits exact', async () => {
    const startedAt = performance.now();
    const answers: Answer[] = [];
    const limited: Answer[] = [];
    const from = markOf(fake);
    const steps: string[] = [];
    const order: Array<[Service, number]> = [
      ['ingress', 0],
      ['ingress', 1],
      ['router', 0],
      ['router', 1],
      ['governance', 0],
      ['governance', 1],
      ['mcp-runner', 0],
      ['admin', 0],
    ];
    await underLoad(send, KEYS.roll.load, answers, async () => {
      await moreAnswers(answers, 2 * CONCURRENCY);
      for (const [name, slot] of order) {
        drill.step = `roll ${name}[${slot}]`;
        await Promise.all([replace(name, slot, steps), burst(send, KEYS.roll.limited, limited)]);
        await moreAnswers(answers, CONCURRENCY);
      }
    });
    const summary = await assertServedAndCharged({
      name: 'roll',
      adminUrl: cluster.adminUrl,
      prefix: cluster.prefix,
      replicaOutput,
      fake,
      from,
      load: { key: KEYS.roll.load, answers },
      limited: { key: KEYS.roll.limited, answers: limited },
    });
    console.info(`drill roll: ${summary} in ${seconds(startedAt)} s\n  ${steps.join('\n  ')}`);
  }, 420_000);

  it('router, governance and ingress each scaled 1 → 3 → 1 under load: nothing fails, charges and limits exact', async () => {
    const startedAt = performance.now();
    const answers: Answer[] = [];
    const limited: Answer[] = [];
    const from = markOf(fake);
    const steps: string[] = [];
    const scaleTo = async (name: Service, count: number) => {
      const stepAt = performance.now();
      const running = cluster.running(name);
      const starting = [0, 1, 2].filter((slot) => slot < count && !running.includes(slot));
      const stopping = running.filter((slot) => slot >= count);
      for (const slot of starting) cluster.start(name, slot);
      const codes = await Promise.all(stopping.map((slot) => cluster.stop(name, slot)));
      expect(codes, `${name}: exit codes of the replicas scaled in`).toEqual(stopping.map(() => 0));
      await Promise.all(starting.map((slot) => cluster.ready(name, slot)));
      if (name === 'ingress')
        await waitFor(() => service.ready().length === count, {
          timeoutMs: 10_000,
          what: `${count} endpoints`,
        });
      steps.push(`${name} ${running.length} → ${count} in ${seconds(stepAt)} s`);
    };
    await underLoad(send, KEYS.scale.load, answers, async () => {
      await moreAnswers(answers, 2 * CONCURRENCY);
      for (const name of ['router', 'governance', 'ingress'] as const) {
        for (const count of [1, 3, 1]) {
          drill.step = `scale ${name} to ${count}`;
          await Promise.all([scaleTo(name, count), burst(send, KEYS.scale.limited, limited)]);
          await moreAnswers(answers, CONCURRENCY);
        }
      }
    });
    const summary = await assertServedAndCharged({
      name: 'scale',
      adminUrl: cluster.adminUrl,
      prefix: cluster.prefix,
      replicaOutput,
      fake,
      from,
      load: { key: KEYS.scale.load, answers },
      limited: { key: KEYS.scale.limited, answers: limited },
    });
    console.info(`drill scale: ${summary} in ${seconds(startedAt)} s\n  ${steps.join('\n  ')}`);
  }, 420_000);
});

describe('drills through the local launcher (src/cluster.ts restarts what stops)', () => {
  let fake: FakeUpstream;
  let cluster: LaunchedCluster;

  beforeAll(async () => {
    fake = await startSlowFake();
    cluster = await startCluster({
      adminToken: ADMIN_TOKEN,
      replicas: { ingress: 2, router: 2, governance: 2 },
      config: config(fake),
      readyTimeoutMs: 90_000,
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  const port = (url: string) => Number(new URL(url).port);
  let next = 0;
  /**
   * No load balancer: each request goes to the next ingress address, and to the other one when its connection
   * is refused or reset before any answer (the ingress there is down or going: no drain delay locally).
   */
  const send: Send = async (key) => {
    const urls = cluster.urls;
    const first = urls[next++ % urls.length]!;
    const { step } = drill;
    try {
      return { ...(await chat(first, key)), retried: false, step };
    } catch {
      const other = urls.find((url) => url !== first)!;
      try {
        return { ...(await chat(other, key)), retried: true, step };
      } catch (error) {
        return { key: key.id, status: 0, body: String(error), url: other, retried: true, step };
      }
    }
  };

  /** The port each replica listens on (its gRPC or HTTP port), by service and replica. */
  const mainPorts = (): Record<Exclude<Service, 'mcp-runner'>, number[]> => ({
    ingress: cluster.urls.map(port),
    admin: cluster.adminUrls.map(port),
    ...cluster.ports,
  });

  /** The process of a replica, found by the port it listens on (mcp-runner by what it runs, under the launcher). */
  async function replicaPid(name: Service, slot: number): Promise<number> {
    return name === 'mcp-runner' ? mcpRunnerPid() : listenerPid(mainPorts()[name][slot]!);
  }

  /** The launcher's mcp-runner child: its parent is the launcher and it runs services/mcp-runner. */
  async function mcpRunnerPid(): Promise<number> {
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== cluster.launcher.pid) continue;
      const command = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
      if (command.includes('services/mcp-runner/src/main.ts')) return Number(entry);
    }
    throw new Error('no mcp-runner under the launcher');
  }

  /**
   * A replica's readiness: `/health/ready` on an ingress's port, else on the port its process listens on besides
   * its main one (the launcher leaves GW_METRICS_PORT at 0: any free port).
   */
  async function ready(name: Service, slot: number, pid: number): Promise<boolean> {
    const main = name === 'mcp-runner' ? undefined : mainPorts()[name][slot];
    const probe =
      name === 'ingress' ? main : (await listeningPorts(pid)).find((candidate) => candidate !== main);
    if (probe === undefined) return false;
    const response = await fetch(`http://127.0.0.1:${probe}/health/ready`, {
      signal: AbortSignal.timeout(1_000),
    });
    return response.status === 200;
  }

  it('every replica of every service SIGTERMed in turn under load and started again by the launcher: no 5xx, charges and limits exact', async () => {
    const startedAt = performance.now();
    const answers: Answer[] = [];
    const limited: Answer[] = [];
    const from = markOf(fake);
    const steps: string[] = [];
    const order: Array<[Service, number]> = [
      ['router', 0],
      ['router', 1],
      ['governance', 0],
      ['governance', 1],
      ['ingress', 0],
      ['ingress', 1],
      ['mcp-runner', 0],
      ['admin', 0],
    ];
    await underLoad(send, KEYS.launcher.load, answers, async () => {
      await moreAnswers(answers, 2 * CONCURRENCY);
      for (const [name, slot] of order) {
        const stepAt = performance.now();
        drill.step = `launcher ${name}[${slot}]`;
        const before = await replicaPid(name, slot);
        process.kill(before, 'SIGTERM');
        await burst(send, KEYS.launcher.limited, limited);
        // The launcher starts it again: a new process, ready.
        const after = await waitFor(
          async () => {
            const pid = await replicaPid(name, slot);
            return pid !== before && (await ready(name, slot, pid)) && pid;
          },
          { timeoutMs: 60_000, intervalMs: 100, what: `${name}[${slot}] restarted and ready` },
        );
        steps.push(`${name}[${slot}] pid ${before} → ${after} in ${seconds(stepAt)} s`);
        await moreAnswers(answers, CONCURRENCY);
      }
    });
    const retried = answers.filter((answer) => answer.retried);
    // Only while an ingress was down did a request need the other address.
    expect(
      [...new Set(retried.map((answer) => answer.step))].filter((step) => !step.includes('ingress')),
    ).toEqual([]);
    const summary = await assertServedAndCharged({
      name: 'launcher roll',
      adminUrl: cluster.adminUrl,
      prefix: cluster.prefix,
      replicaOutput: () => logLines(cluster.output()),
      fake,
      from,
      load: { key: KEYS.launcher.load, answers },
      limited: { key: KEYS.launcher.limited, answers: limited },
    });
    console.info(
      `drill launcher roll: ${summary} (${retried.length} sent again to the other ingress) in ${seconds(startedAt)} s\n  ${steps.join('\n  ')}`,
    );
  }, 420_000);
});
