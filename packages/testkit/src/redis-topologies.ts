import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { waitFor } from './wait-for.ts';

const run = promisify(execFile);

/** Real redis-server processes a test started, on loopback ports of their own. */
export interface RedisTopology {
  /** REDIS_URL for gw (`redis+cluster://…` or `redis+sentinel://…/gw-master`). */
  url: string;
  /** Every data node's port (the first is the first master / the Sentinel's initial master). */
  ports: number[];
  stop(): Promise<void>;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Free loopback ports; `withBus` also needs port + 10000 free (a cluster node's bus). */
async function freePorts(count: number, withBus = false): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (ports.includes(port)) continue;
    if (!(await portIsFree(port)) || (withBus && !(await portIsFree(port + 10_000)))) continue;
    ports.push(port);
  }
  return ports;
}

/** Servers started here and still running: killed when this process exits before it stopped them. */
const running = new Set<ChildProcess>();
process.once('exit', killRunning);

function startServer(args: string[], directory: string): ChildProcess {
  const child = spawn('redis-server', args, { cwd: directory, stdio: 'ignore' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Kills what is still running as this process exits (a bench stopped by SIGTERM while a Cluster was starting,
 * before it had the Cluster's handle to stop): `exit` handlers run synchronously, and `kill` is.
 */
function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
}

async function answering(port: number): Promise<void> {
  await waitFor(
    async () => {
      const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
      return stdout.trim() === 'PONG';
    },
    { timeoutMs: 10_000, what: `redis-server on ${port}` },
  );
}

function stopper(processes: ChildProcess[], directory: string) {
  return async () => {
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    await rm(directory, { recursive: true, force: true });
  };
}

/** A Redis Cluster of `masters` masters (no replicas), every slot assigned, state ok on every node. */
export async function startRedisCluster(masters = 3): Promise<RedisTopology> {
  const directory = await mkdtemp(join(tmpdir(), 'gw-redis-cluster-'));
  const ports = await freePorts(masters, true);
  const processes = ports.map((port) =>
    startServer(
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      directory,
    ),
  );
  const stop = stopper(processes, directory);
  try {
    await Promise.all(ports.map(answering));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await waitFor(
      async () => {
        for (const port of ports) {
          const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
          if (!stdout.includes('cluster_state:ok')) return false;
        }
        return true;
      },
      { timeoutMs: 15_000, what: 'cluster_state:ok on every node' },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, ports, stop };
}

/** The master name the Sentinels of startRedisSentinel watch. */
export const SENTINEL_MASTER = 'gw-master';

/**
 * A master, one replica and three Sentinels (quorum 2, a master is down after 1 s of silence), ready to fail
 * over: every Sentinel knows the replica and the other Sentinels.
 */
export async function startRedisSentinel(): Promise<RedisTopology & { sentinelPorts: number[] }> {
  const directory = await mkdtemp(join(tmpdir(), 'gw-redis-sentinel-'));
  const [master, replica, ...sentinelPorts] = await freePorts(5);
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const processes = [
    startServer(['--port', String(master), ...common], directory),
    startServer(
      ['--port', String(replica), ...common, '--replicaof', '127.0.0.1', String(master)],
      directory,
    ),
  ];
  const stop = stopper(processes, directory);
  try {
    await Promise.all([master!, replica!].map(answering));
    for (const port of sentinelPorts) {
      const file = join(directory, `sentinel-${port}.conf`);
      await writeFile(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
          `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
          '',
        ].join('\n'),
      );
      processes.push(startServer([file, '--sentinel'], directory));
    }
    await Promise.all(sentinelPorts.map(answering));
    await waitFor(
      async () => {
        for (const port of sentinelPorts) {
          const sentinel = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
          try {
            await sentinel.connect();
            const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', SENTINEL_MASTER)) as unknown[];
            const peers = (await sentinel.call('SENTINEL', 'SENTINELS', SENTINEL_MASTER)) as unknown[];
            if (replicas.length < 1 || peers.length < 2) return false;
          } finally {
            sentinel.disconnect();
          }
        }
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'every Sentinel knowing the replica and its peers' },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',')}/${SENTINEL_MASTER}`,
    ports: [master!, replica!],
    sentinelPorts,
    stop,
  };
}
