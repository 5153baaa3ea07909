// What Kubernetes does to gw's processes, without Kubernetes (test/drills.test.ts): each replica is a process of
// its own, started, SIGTERMed and started again on ports declared up front, as a kubelet runs pods; the other
// services' address lists name every port a replica may ever take (a headless Service's DNS names only the
// ready pods; gRPC clients skip the ones that do not answer and pick up a new one within a second); a replica
// counts as up once its readiness probe says so; and clients reach the ingress through a Service that sends
// them only to replicas whose readiness answers 200, updated as endpoints are (polled every 200 ms).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  deleteRedisKeys,
  findConsecutivePorts,
  type GatewayConfigInput,
  scaled,
  testRedisPrefix,
  waitFor,
} from '@gw/testkit';

export const SERVICES = ['governance', 'router', 'mcp-runner', 'ingress', 'admin'] as const;
export type Service = (typeof SERVICES)[number];

/** The ports of one replica slot: what it serves on, and where its probes answer (the ingress: the same port). */
interface SlotPorts {
  main: number | undefined;
  probe: number;
}

/** One process of a replica slot, from its start to its exit. */
interface Replica {
  child: ChildProcess;
  exited: Promise<number | null>;
}

export interface K8sLikeOptions {
  config: GatewayConfigInput;
  adminToken: string;
  /** Replica slots of each service: the ports every address list names from the start. */
  slots: Record<Service, number>;
  /** Variables of every process (as the gw-env ConfigMap sets them). */
  env?: Record<string, string>;
}

const OUTPUT_LIMIT = 64 * 1024;
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** The variables that give a replica of `service` its ports. */
function portVariables(service: Service, ports: SlotPorts): Record<string, string> {
  const probe = { GW_METRICS_PORT: String(ports.probe) };
  switch (service) {
    case 'ingress':
      return { PORT: String(ports.probe) };
    case 'router':
      return { ...probe, GW_ROUTER_PORT: String(ports.main) };
    case 'governance':
      return { ...probe, GW_GOVERNANCE_PORT: String(ports.main) };
    case 'admin':
      return { ...probe, GW_ADMIN_PORT: String(ports.main) };
    case 'mcp-runner':
      return probe;
  }
}

/** Ports a replica of the service takes: its main port (none for mcp-runner, the probe port for the ingress). */
const PORTS_PER_REPLICA: Record<Service, number> = {
  governance: 2,
  router: 2,
  'mcp-runner': 1,
  ingress: 1,
  admin: 2,
};

/** A GET's status, or undefined when nothing answers within a second. */
async function statusOf(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

/**
 * Processes of each service on ports declared up front, a Redis prefix of their own and one config file, as a
 * cluster's Deployments run them (the environment is src/cluster.ts's). Nothing runs until `start` is called.
 */
export class K8sLikeCluster {
  readonly prefix = testRedisPrefix();
  readonly clusterToken = randomBytes(32).toString('hex');
  private readonly options: K8sLikeOptions;
  private readonly ports: Record<Service, SlotPorts[]>;
  private readonly replicas = new Map<string, Replica>();
  private readonly output = new Map<string, string>();
  private readonly directory: string;

  private constructor(options: K8sLikeOptions, ports: Record<Service, SlotPorts[]>, directory: string) {
    this.options = options;
    this.ports = ports;
    this.directory = directory;
  }

  /** Declares every slot's ports (one block below the ephemeral range, so no outgoing connection takes one). */
  static async declare(options: K8sLikeOptions): Promise<K8sLikeCluster> {
    const total = SERVICES.reduce(
      (sum, service) => sum + options.slots[service] * PORTS_PER_REPLICA[service],
      0,
    );
    let next = await findConsecutivePorts(total);
    const ports = Object.fromEntries(
      SERVICES.map((service) => [
        service,
        Array.from({ length: options.slots[service] }, () => {
          const main = PORTS_PER_REPLICA[service] === 2 ? next++ : undefined;
          return { main, probe: next++ };
        }),
      ]),
    ) as Record<Service, SlotPorts[]>;
    const directory = await mkdtemp(join(tmpdir(), 'gw-k8s-like-'));
    await writeFile(join(directory, 'gateway.json'), JSON.stringify(options.config));
    return new K8sLikeCluster(options, ports, directory);
  }

  /** Every ingress slot's base URL (what the client-side Service chooses among). */
  get ingressUrls(): string[] {
    return this.ports.ingress.map(({ probe }) => `http://127.0.0.1:${probe}`);
  }

  /** The first admin slot's base URL. */
  get adminUrl(): string {
    return `http://127.0.0.1:${this.ports.admin[0]!.main}`;
  }

  /** Slots of a service whose process is running. */
  running(service: Service): number[] {
    return this.ports[service].flatMap((_, slot) => (this.replicas.has(`${service}[${slot}]`) ? [slot] : []));
  }

  /** What a replica slot's processes wrote (stdout and stderr, the last 64 KiB), for a failure's message. */
  outputOf(service: Service, slot: number): string {
    return this.output.get(`${service}[${slot}]`) ?? '';
  }

  /** Starts a replica in a slot (as the kubelet starts a pod's container); `ready` waits for it. */
  start(service: Service, slot: number): void {
    const name = `${service}[${slot}]`;
    if (this.replicas.has(name)) throw new Error(`${name} is running already`);
    const addresses = (of: 'router' | 'governance') =>
      this.ports[of].map(({ main }) => `127.0.0.1:${main}`).join(',');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL,
      GW_REDIS_PREFIX: this.prefix,
      GW_HOST: '127.0.0.1',
      GATEWAY_CONFIG: join(this.directory, 'gateway.json'),
      GATEWAY_ADMIN_TOKEN: this.options.adminToken,
      GW_CLUSTER_TOKEN: this.clusterToken,
      GW_ROUTER_ADDR: addresses('router'),
      GW_GOVERNANCE_ADDR: addresses('governance'),
      // No log database, no log worker: nothing would read the records (src/cluster.ts does the same).
      GW_LOGS_STREAM: 'off',
      LOG_LEVEL: 'warn',
      ...this.options.env,
      ...portVariables(service, this.ports[service][slot]!),
    };
    const main = fileURLToPath(new URL(`../../services/${service}/src/main.ts`, import.meta.url));
    const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      this.output.set(name, (this.outputOf(service, slot) + chunk.toString('utf8')).slice(-OUTPUT_LIMIT));
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        this.replicas.delete(name);
        resolve(code);
      }),
    );
    this.replicas.set(name, { child, exited });
  }

  /** Whether a slot's readiness probe answers 200 (the ingress's `/health/ready`, the others' on their metrics port). */
  async isReady(service: Service, slot: number): Promise<boolean> {
    return (await statusOf(`http://127.0.0.1:${this.ports[service][slot]!.probe}/health/ready`)) === 200;
  }

  /** Waits until a slot's replica is ready; fails at once, with what it wrote, if it exits meanwhile. */
  async ready(service: Service, slot: number, timeoutMs = 60_000): Promise<void> {
    const name = `${service}[${slot}]`;
    await waitFor(
      async () => {
        if (!this.replicas.has(name)) throw new Error(`${name} exited:\n${this.outputOf(service, slot)}`);
        return this.isReady(service, slot);
      },
      { timeoutMs, intervalMs: 100, what: `${name} to be ready` },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.outputOf(service, slot)}`);
    });
  }

  /** SIGTERM to a slot's replica (as the kubelet stops a pod); resolves with its exit code once it has exited. */
  async stop(service: Service, slot: number): Promise<number | null> {
    const replica = this.replicas.get(`${service}[${slot}]`);
    if (!replica) throw new Error(`${service}[${slot}] is not running`);
    replica.child.kill('SIGTERM');
    return replica.exited;
  }

  /** Stops every replica (SIGKILL after 15 s, longer on a loaded machine), and deletes the Redis keys and the config file. */
  async close(): Promise<void> {
    const all = [...this.replicas.values()];
    for (const { child } of all) child.kill('SIGTERM');
    const settled = Promise.all(all.map(({ exited }) => exited));
    const waiting = new AbortController();
    const overdue = sleep(scaled(15_000), 'overdue' as const, { signal: waiting.signal }).catch(
      () => 'settled' as const,
    );
    const outcome = await Promise.race([settled, overdue]);
    waiting.abort();
    if (outcome === 'overdue') {
      for (const { child } of all) child.kill('SIGKILL');
      await settled;
    }
    await deleteRedisKeys(REDIS_URL, this.prefix);
    await rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * A Service in front of the ingress replicas, on the client's side: its endpoints are the replicas whose
 * `/health/ready` answered 200 at the last poll (every 200 ms each), as the endpoints controller keeps a
 * Service's; `pick` goes round them, and waits while there is none.
 */
export class ClientService {
  private readonly urls: string[];
  private readonly endpoints = new Set<string>();
  private next = 0;
  private polling = true;
  private readonly loops: Promise<void>[];

  constructor(urls: string[], pollMs = 200) {
    this.urls = urls;
    this.loops = urls.map(async (url) => {
      while (this.polling) {
        if ((await statusOf(`${url}/health/ready`)) === 200) this.endpoints.add(url);
        else this.endpoints.delete(url);
        await sleep(pollMs);
      }
    });
  }

  /** The ingress URLs that are endpoints now. */
  ready(): string[] {
    return this.urls.filter((url) => this.endpoints.has(url));
  }

  /** The next endpoint, round-robin; waits (up to `timeoutMs`) while the Service has none. */
  pick(timeoutMs = 90_000): Promise<string> {
    return waitFor(
      () => {
        const ready = this.ready();
        if (ready.length === 0) return undefined;
        return ready[this.next++ % ready.length];
      },
      { timeoutMs, intervalMs: 20, what: 'an ingress endpoint' },
    );
  }

  async close(): Promise<void> {
    this.polling = false;
    await Promise.all(this.loops);
  }
}
