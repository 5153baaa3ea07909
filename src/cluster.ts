// `pnpm start:cluster`: every service as its own process (GW_<SERVICE>_REPLICAS each) over gRPC, state in REDIS_URL.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type ClusterEnvironment, clusterEnvironmentSchema, readEnvironment } from '@gw/shared';
import { refuseStart } from '@gw/shared/server';

const SERVICES = ['governance', 'router', 'mcp-runner', 'ingress', 'admin'] as const;
type Service = (typeof SERVICES)[number];

let environment: ClusterEnvironment;
try {
  environment = readEnvironment(clusterEnvironmentSchema, process.env);
} catch (error) {
  refuseStart('cluster', error);
}

const replicas: Record<Service, number> = {
  governance: environment.GW_GOVERNANCE_REPLICAS,
  router: environment.GW_ROUTER_REPLICAS,
  'mcp-runner': environment.GW_MCP_RUNNER_REPLICAS,
  ingress: environment.GW_INGRESS_REPLICAS,
  admin: environment.GW_ADMIN_REPLICAS,
};
const addresses = (base: number, n: number) =>
  Array.from({ length: n }, (_, index) => `127.0.0.1:${base + index}`).join(',');
// Every service gets this launcher's environment (LOG_LEVEL, GATEWAY_CONFIG, provider secrets…), the
// addresses of the others, and the token of their gRPC calls (a fresh one per launch unless given).
const shared: NodeJS.ProcessEnv = {
  ...process.env,
  GW_CLUSTER_TOKEN: environment.GW_CLUSTER_TOKEN ?? randomBytes(32).toString('hex'),
  GW_ROUTER_ADDR: environment.GW_ROUTER_ADDR ?? addresses(environment.GW_ROUTER_PORT, replicas.router),
  GW_GOVERNANCE_ADDR:
    environment.GW_GOVERNANCE_ADDR ?? addresses(environment.GW_GOVERNANCE_PORT, replicas.governance),
  // No log database, no log worker: ingress replicas then append no records to the Redis stream (docs/logs.md).
  ...(!environment.GW_LOGS_DATABASE_URL && { GW_LOGS_STREAM: 'off' }),
};

/** The variables of one replica: its own port, consecutive from the service's base port. */
function replicaEnvironment(service: Service, index: number): NodeJS.ProcessEnv {
  switch (service) {
    case 'router':
      return { ...shared, GW_ROUTER_PORT: String(environment.GW_ROUTER_PORT + index) };
    case 'governance':
      return { ...shared, GW_GOVERNANCE_PORT: String(environment.GW_GOVERNANCE_PORT + index) };
    case 'ingress':
      return { ...shared, PORT: String(environment.PORT + index) };
    case 'admin':
      return {
        ...shared,
        GW_ADMIN_PORT: String(environment.GW_ADMIN_PORT + index),
        // The console's snippets and playground name the ingress, not the admin port (`/v1` is not served there).
        GW_PUBLIC_URL: environment.GW_PUBLIC_URL ?? `http://127.0.0.1:${environment.PORT}`,
      };
    case 'mcp-runner':
      return shared;
  }
}

/** Live replicas and their service. */
const children = new Map<ChildProcess, Service>();
let stopping = false;
/** Exit times per replica: a replica that keeps crashing stops the cluster instead of looping forever. */
const crashes = new Map<string, number[]>();
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES = 5;
/**
 * A replica that exits with an error this soon after its first start failed to start (a bad config, a port
 * taken). Generous: on a loaded machine a service takes several seconds just to load its modules.
 */
const FIRST_START_MS = 30_000;

/**
 * Every service gets a bounded heap, not one sized from this host's memory: without a memory limit Node sizes V8
 * from the host (a 4 GB old generation and 64 MB semi-spaces on a 24 GB host), and a busy process fills the large
 * young generation and lets its old one grow to several times what is live. An ingress under 50 concurrent
 * governed requests held 400 MB for 50 MB of live heap; with these flags 190 MB (docs/operations.md "Memory").
 * 512 MB is the old generation a 1 GiB pod gets (Node hands V8 half the limit); 16 MB semi-spaces rather than
 * the 8 MB that pod gets cost 13 MB and saved about 5 % of the ingress's CPU a request. A flag
 * NODE_OPTIONS names wins (`=0`: V8's own sizing).
 */
const V8_FLAGS = ['--max-old-space-size=512', '--max-semi-space-size=16'].filter(
  (flag) => !(process.env['NODE_OPTIONS'] ?? '').includes(flag.slice(0, flag.indexOf('='))),
);

function start(service: Service, index: number): void {
  const env = replicaEnvironment(service, index);
  const main = fileURLToPath(new URL(`../services/${service}/src/main.ts`, import.meta.url));
  const child = spawn(process.execPath, [...V8_FLAGS, main], { env, stdio: 'inherit' });
  const startedAt = Date.now();
  children.set(child, service);
  child.on('exit', (code, signal) => {
    children.delete(child);
    if (stopping) return;
    // Failing at its very first start is a configuration problem (bad config, port taken): restarting
    // cannot help, so the cluster stops with it.
    if (
      !crashes.has(`${service}[${index}]`) &&
      code !== null &&
      code !== 0 &&
      Date.now() - startedAt < FIRST_START_MS
    ) {
      console.error(`${service}[${index}] failed to start (exit ${code}); stopping the cluster`);
      shutdown(1);
      return;
    }
    // Like a pod's restart policy: a replica that dies is started again; the others keep serving.
    const name = `${service}[${index}]`;
    const now = Date.now();
    const recent = [...(crashes.get(name) ?? []), now].filter((time) => now - time < CRASH_WINDOW_MS);
    crashes.set(name, recent);
    if (recent.length > MAX_CRASHES) {
      console.error(
        `${name} exited ${recent.length} times within a minute (last: ${signal ?? code}); stopping the cluster`,
      );
      shutdown(1);
      return;
    }
    console.error(`${name} exited (${signal ?? code}); restarting it`);
    setTimeout(() => {
      if (!stopping) start(service, index);
    }, 200 * recent.length);
  });
}

/** SIGTERM to every live replica of a service; resolves when they have exited (each drains on its own). */
async function stopReplicas(service: Service): Promise<void> {
  const alive = [...children]
    .filter(([child, of]) => of === service && child.exitCode === null && child.signalCode === null)
    .map(([child]) => child);
  const exits = alive.map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
  for (const child of alive) child.kill('SIGTERM');
  await Promise.all(exits);
}

// Services start in dependency order (governance and the router before the ingress that calls them), and the
// stack stops them in reverse: an ingress drains its in-flight requests while the router and governance still
// answer them.
const services = new AsyncDisposableStack();

function shutdown(code: number): void {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    for (const child of children.keys()) child.kill('SIGKILL');
    process.exit(code);
  }, 30_000).unref();
  services.disposeAsync().then(
    () => process.exit(code),
    (error) => {
      console.error('stopping the cluster failed', error);
      process.exit(1);
    },
  );
}

process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));

for (const service of SERVICES) {
  services.defer(() => stopReplicas(service));
  for (let index = 0; index < replicas[service]; index++) start(service, index);
}
