// `pnpm start:cluster`: every service as its own process (GW_<SERVICE>_REPLICAS each) over gRPC, state in REDIS_URL.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVICES = ['governance', 'router', 'mcp-runner', 'ingress', 'admin'] as const;
type Service = (typeof SERVICES)[number];

function count(service: Service): number {
  const name = `GW_${service.toUpperCase().replace('-', '_')}_REPLICAS`;
  const value = Number(process.env[name] ?? 1);
  if (!Number.isInteger(value) || value < 0 || value > 64)
    throw new Error(`${name}: '${process.env[name]}' is not a replica count (0-64)`);
  return value;
}

function port(name: string, fallback: number): number {
  return Number(process.env[name] ?? fallback);
}

if (!process.env['REDIS_URL']) {
  console.error('start:cluster needs REDIS_URL (for example redis://127.0.0.1:6379)');
  process.exit(1);
}

const routerBase = port('GW_ROUTER_PORT', 7101);
const governanceBase = port('GW_GOVERNANCE_PORT', 7201);
const replicas = Object.fromEntries(SERVICES.map((service) => [service, count(service)])) as Record<
  Service,
  number
>;
const addresses = (base: number, n: number) =>
  Array.from({ length: n }, (_, index) => `127.0.0.1:${base + index}`).join(',');
const shared = {
  ...process.env,
  GW_ROUTER_ADDR: process.env['GW_ROUTER_ADDR'] ?? addresses(routerBase, replicas.router),
  GW_GOVERNANCE_ADDR: process.env['GW_GOVERNANCE_ADDR'] ?? addresses(governanceBase, replicas.governance),
};

const children = new Set<ChildProcess>();
let stopping = false;
/** Exit times per replica: a replica that keeps crashing stops the cluster instead of looping forever. */
const crashes = new Map<string, number[]>();
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES = 5;

function start(service: Service, index: number): void {
  const env: NodeJS.ProcessEnv = { ...shared, GW_REPLICA: String(index) };
  if (service === 'router') env['GW_ROUTER_PORT'] = String(routerBase + index);
  if (service === 'governance') env['GW_GOVERNANCE_PORT'] = String(governanceBase + index);
  if (service === 'ingress') env['PORT'] = String(port('PORT', 8080) + index);
  if (service === 'admin') env['GW_ADMIN_PORT'] = String(port('GW_ADMIN_PORT', 9080) + index);
  const main = fileURLToPath(new URL(`../services/${service}/src/main.ts`, import.meta.url));
  const child = spawn(process.execPath, [main], { env, stdio: 'inherit' });
  const startedAt = Date.now();
  children.add(child);
  child.on('exit', (code, signal) => {
    children.delete(child);
    if (stopping) return;
    // Failing at its very first start is a configuration problem (bad config, port taken): restarting
    // cannot help, so the cluster stops with it.
    if (
      !crashes.has(`${service}[${index}]`) &&
      code !== null &&
      code !== 0 &&
      Date.now() - startedAt < 5_000
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

function shutdown(code: number): void {
  if (stopping) return;
  stopping = true;
  const alive = [...children].filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of alive) child.kill('SIGTERM');
  let remaining = alive.length;
  if (remaining === 0) process.exit(code);
  for (const child of alive) {
    child.on('exit', () => {
      remaining -= 1;
      if (remaining === 0) process.exit(code);
    });
  }
  setTimeout(() => {
    for (const child of alive) child.kill('SIGKILL');
    process.exit(code);
  }, 30_000).unref();
}

process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));

for (const service of SERVICES) {
  for (let index = 0; index < replicas[service]; index++) start(service, index);
}
