import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type gatewayConfigSchema, parseGatewayConfig, silentLogger } from '@gw/shared';
import type { HttpLimits } from '@gw/shared/server';
import { connectRedis } from '@gw/shared/store';
import { Cluster } from 'ioredis';
import { startEmbeddedGateway } from '../../../src/embedded-gateway.ts';
import { scaled } from './time-scale.ts';
import { waitFor } from './wait-for.ts';

/** The config file's document as a test writes it (defaults may be left out). */
export type GatewayConfigInput = (typeof gatewayConfigSchema)['_input'];

/** A running gateway, whichever mode launched it. */
export interface LaunchedGateway {
  mode: 'embedded' | 'cluster';
  /** The first (or only) inference base URL. */
  url: string;
  /** Every ingress base URL (one per replica; the embedded gateway has one). */
  urls: string[];
  /** Base URL of `/api/*`. */
  adminUrl: string;
  /** Every admin base URL (one per replica; the embedded gateway has one). */
  adminUrls: string[];
  close(): Promise<void>;
}

export interface EmbeddedLaunchOptions {
  config: GatewayConfigInput;
  adminToken?: string;
  /** GW_SCIM_TOKEN of the embedded gateway (`/scim/v2`). */
  scimToken?: string;
  /** Variables set in this process while the gateway runs (for `env.NAME` references). */
  env?: Record<string, string>;
  /** A data directory to reuse (restart tests); it is kept on close. A fresh one is made and removed otherwise. */
  dataDir?: string;
  /** How long close() lets in-flight requests drain before it forces connections shut; 5 s by default. */
  closeDeadlineMs?: number;
  /** The HTTP port's limits (what GW_MAX_CONNECTIONS and its kin set for `node src/embedded.ts`). */
  limits?: Partial<HttpLimits>;
}

export interface LaunchedEmbedded extends LaunchedGateway {
  mode: 'embedded';
  dataDir: string;
}

/** Starts the embedded gateway in this process on a free loopback port, with a fresh data directory. */
export async function startEmbedded(options: EmbeddedLaunchOptions): Promise<LaunchedEmbedded> {
  const restore = setEnvironment(options.env ?? {});
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gw-embedded-')));
  const removeDataDir = () => (ownsDataDir ? rm(dataDir, { recursive: true, force: true }) : undefined);
  try {
    const config = parseGatewayConfig(options.config, process.env);
    const gateway = await startEmbeddedGateway({
      config,
      logger: silentLogger(),
      port: 0,
      host: '127.0.0.1',
      dataDir,
      adminToken: options.adminToken,
      scimToken: options.scimToken,
      environment: process.env,
      ...(options.limits && { limits: options.limits }),
    });
    const url = `http://127.0.0.1:${gateway.port}`;
    let closing: Promise<void> | undefined;
    return {
      mode: 'embedded',
      url,
      urls: [url],
      adminUrl: url,
      adminUrls: [url],
      dataDir,
      close() {
        closing ??= (async () => {
          try {
            await gateway.close(options.closeDeadlineMs ?? 5_000);
          } finally {
            restore();
            await removeDataDir();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    restore();
    await removeDataDir();
    throw error;
  }
}

function setEnvironment(values: Record<string, string>): () => void {
  const previous = Object.entries(values).map(([name]) => [name, process.env[name]] as const);
  for (const [name, value] of Object.entries(values)) process.env[name] = value;
  return () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

// --- cluster ---------------------------------------------------------------------------------------------

export interface ClusterReplicas {
  ingress?: number;
  router?: number;
  governance?: number;
  'mcp-runner'?: number;
  admin?: number;
}

export interface ClusterLaunchOptions {
  config: GatewayConfigInput;
  adminToken?: string;
  replicas?: ClusterReplicas;
  /** Extra variables for every service process. */
  env?: Record<string, string>;
  /**
   * How long every service has to answer on an idle machine; 50 s by default. Stretched by the time scale (a
   * loaded machine starts a cluster slowly), as every waitFor is.
   */
  readyTimeoutMs?: number;
}

export interface LaunchedCluster extends LaunchedGateway {
  mode: 'cluster';
  /** Prefix of every Redis key of this launch. */
  prefix: string;
  /** The `node src/cluster.ts` launcher process (send it SIGTERM to test draining). */
  launcher: ChildProcess;
  /** Resolves with the launcher's exit code once it has exited. */
  exited: Promise<number | null>;
  /** The last lines the services wrote (stdout and stderr). */
  output(): string;
  /** The gRPC port of each router and governance replica (to find, freeze or kill one). */
  ports: { router: number[]; governance: number[] };
}

const CLUSTER_ENTRY = fileURLToPath(new URL('../../../src/cluster.ts', import.meta.url));
const OUTPUT_LIMIT = 1024 * 1024;

/**
 * Starts `node src/cluster.ts` against Redis with a unique key prefix and free loopback ports, and waits
 * until every ingress, router, governance and admin process answers.
 */
export async function startCluster(options: ClusterLaunchOptions): Promise<LaunchedCluster> {
  const replicas = {
    ingress: options.replicas?.ingress ?? 1,
    router: options.replicas?.router ?? 1,
    governance: options.replicas?.governance ?? 1,
    'mcp-runner': options.replicas?.['mcp-runner'] ?? 1,
    admin: options.replicas?.admin ?? 1,
  };
  const directory = await mkdtemp(join(tmpdir(), 'gw-cluster-'));
  const configPath = join(directory, 'gateway.json');
  await writeFile(configPath, JSON.stringify(options.config, null, 2));

  // One block of consecutive free ports: ingress replicas, router replicas, governance replicas, admin replicas.
  const base = await findConsecutivePorts(
    replicas.ingress + replicas.router + replicas.governance + replicas.admin,
  );
  const ingressPort = base;
  const routerPort = ingressPort + replicas.ingress;
  const governancePort = routerPort + replicas.router;
  const adminPort = governancePort + replicas.governance;
  const prefix = `gw-test:${process.pid}:${randomBytes(6).toString('hex')}:`;
  const redisUrl = options.env?.['REDIS_URL'] ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redisUrl,
    GW_REDIS_PREFIX: prefix,
    GW_HOST: '127.0.0.1',
    PORT: String(ingressPort),
    GW_ADMIN_PORT: String(adminPort),
    GW_ROUTER_PORT: String(routerPort),
    GW_GOVERNANCE_PORT: String(governancePort),
    GW_INGRESS_REPLICAS: String(replicas.ingress),
    GW_ROUTER_REPLICAS: String(replicas.router),
    GW_GOVERNANCE_REPLICAS: String(replicas.governance),
    GW_MCP_RUNNER_REPLICAS: String(replicas['mcp-runner']),
    GW_ADMIN_REPLICAS: String(replicas.admin),
    GATEWAY_CONFIG: configPath,
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  // Addresses are derived from the ports above; inherited ones would point at another cluster.
  delete env['GW_ROUTER_ADDR'];
  delete env['GW_GOVERNANCE_ADDR'];
  delete env['GATEWAY_ADMIN_TOKEN'];
  if (options.adminToken !== undefined) env['GATEWAY_ADMIN_TOKEN'] = options.adminToken;

  // Its own process group, so that a launcher that must be killed takes its services with it.
  const launcher = spawn(process.execPath, [CLUSTER_ENTRY], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  launcher.stdout?.on('data', collect);
  launcher.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => {
    if (launcher.exitCode !== null || launcher.signalCode !== null) resolve(launcher.exitCode);
    else launcher.once('exit', (code) => resolve(code));
  });

  const urls = Array.from(
    { length: replicas.ingress },
    (_, index) => `http://127.0.0.1:${ingressPort + index}`,
  );
  const adminUrls = range(adminPort, replicas.admin).map((port) => `http://127.0.0.1:${port}`);
  const adminUrl = adminUrls[0]!;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      try {
        await stopLauncher(launcher, exited);
      } finally {
        await deleteKeys(redisUrl, prefix);
        await rm(directory, { recursive: true, force: true });
      }
    })();
    return closing;
  };

  try {
    await waitUntilReady({
      launcher,
      timeoutMs: options.readyTimeoutMs ?? 50_000,
      output: () => output,
      checks: [
        // Ready, not only up: a router replica answers it and its store does (docs/kubernetes.md "Probes").
        ...urls.map((url) => () => answers(`${url}/health/ready`, [200])),
        // 401 without a credential; 403 when no admin token is configured at all.
        ...adminUrls.map((url) => () => answers(`${url}/api/providers`, [200, 401, 403])),
        ...range(routerPort, replicas.router).map((port) => () => accepts(port)),
        ...range(governancePort, replicas.governance).map((port) => () => accepts(port)),
      ],
    });
  } catch (error) {
    await close();
    throw error;
  }

  return {
    mode: 'cluster',
    url: urls[0]!,
    urls,
    adminUrl,
    adminUrls,
    prefix,
    launcher,
    exited,
    output: () => output,
    ports: {
      router: range(routerPort, replicas.router),
      governance: range(governancePort, replicas.governance),
    },
    close,
  };
}

function range(start: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => start + index);
}

async function waitUntilReady(options: {
  launcher: ChildProcess;
  timeoutMs: number;
  output: () => string;
  checks: Array<() => Promise<boolean>>;
}): Promise<void> {
  const pending = new Set(options.checks);
  const exited = () => options.launcher.exitCode !== null || options.launcher.signalCode !== null;
  const started = Date.now();
  const ready = await waitFor(
    async () => {
      if (exited()) return true;
      for (const check of [...pending]) if (await check()) pending.delete(check);
      return pending.size === 0;
    },
    { timeoutMs: options.timeoutMs, intervalMs: 100 },
  ).catch(() => false);
  if (exited()) {
    throw new Error(
      `the cluster exited during start-up (${options.launcher.signalCode ?? options.launcher.exitCode}):\n${options.output()}`,
    );
  }
  if (!ready) {
    throw new Error(
      `the cluster was not ready after ${Date.now() - started} ms (${pending.size} services not answering):\n${options.output()}`,
    );
  }
}

async function answers(url: string, statuses: number[]): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(scaled(1_000)) });
    await response.body?.cancel();
    return statuses.includes(response.status);
  } catch {
    return false;
  }
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(scaled(1_000));
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** SIGTERM, wait for the drain; SIGKILL the whole process group after 10 s (stretched by the time scale). */
async function stopLauncher(launcher: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      if (launcher.pid !== undefined) {
        try {
          process.kill(-launcher.pid, 'SIGKILL');
        } catch {}
      }
      resolve();
    }, scaled(10_000));
  });
  await Promise.race([exited, killed]);
  clearTimeout(timer);
  await exited;
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const connection = connectRedis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    try {
      await connection.connect();
    } catch {
      // A Redis that is gone (a fault test's own, killed) holds no keys to delete.
      return;
    }
    // A Cluster's keys are spread over its masters: each is scanned (a key is deleted on its own node).
    const servers = connection instanceof Cluster ? connection.nodes('master') : [connection];
    for (const server of servers) {
      let cursor = '0';
      do {
        const [next, keys] = await server.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 500);
        cursor = next;
        for (const key of keys) await server.del(key);
      } while (cursor !== '0');
    }
  } finally {
    connection.disconnect();
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** A free loopback port: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  const server = await listen(0);
  const port = (server.address() as { port: number }).port;
  await closeServer(server);
  return port;
}

/**
 * `count` consecutive free loopback ports (ingress replicas listen on consecutive ports): a random base,
 * every port of the block bound at once to prove it free, then released. The block lies below the kernel's
 * ephemeral range (32768 and up here), where no outgoing connection or port-0 bind of a parallel test can
 * take a port between this check and the services' own bind (a cluster once failed to start that way).
 */
export async function findConsecutivePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 12_000 + Math.floor(Math.random() * (20_000 - count));
    const held: Server[] = [];
    try {
      for (let index = 0; index < count; index++) held.push(await listen(base + index));
      return base;
    } catch {
      // Taken; try another block.
    } finally {
      await Promise.all(held.map(closeServer));
    }
  }
  throw new Error(`no block of ${count} consecutive free ports found on 127.0.0.1`);
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
