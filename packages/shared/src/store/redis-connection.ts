import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';

/**
 * The Redis topologies gw runs on, all named by REDIS_URL:
 * - `redis://[user:password@]host:port[/db]` (or `rediss://`): one server;
 * - `redis+cluster://[user:password@]host:port,host:port…`: a Redis Cluster, from any of its nodes;
 * - `redis+sentinel://[user:password@]host:port,host:port…/<master name>`: the master Sentinel names (the
 *   password is the data nodes'; sentinels are asked without one).
 */
export type RedisTopology =
  | { kind: 'server'; url: string }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }>; auth: Auth; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: Array<{ host: string; port: number }>;
      name: string;
      auth: Auth;
      tls: boolean;
    };

interface Auth {
  username?: string;
  password?: string;
}

const MULTI_HOST = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/([^?#]*))?$/;

/** Reads REDIS_URL; throws a message naming what is wrong. */
export function parseRedisTopology(url: string): RedisTopology {
  const match = MULTI_HOST.exec(url);
  if (!match) {
    if (!/^rediss?:\/\//.test(url) || !URL.canParse(url)) {
      throw new Error('is not a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL');
    }
    return { kind: 'server', url };
  }
  const [, scheme, kind, userInfo, hostList, path] = match;
  const nodes = hostList!.split(',').map((entry) => {
    const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry.trim());
    if (!hostPort) throw new Error(`'${entry}' is not host:port`);
    return { host: hostPort[1]!.replace(/^\[|\]$/g, ''), port: Number(hostPort[2]) };
  });
  const auth: Auth = {};
  if (userInfo) {
    const colon = userInfo.indexOf(':');
    const username = decodeURIComponent(colon === -1 ? userInfo : userInfo.slice(0, colon));
    if (username) auth.username = username;
    if (colon !== -1) auth.password = decodeURIComponent(userInfo.slice(colon + 1));
  }
  const tls = scheme === 'rediss';
  if (kind === 'cluster') return { kind: 'cluster', nodes, auth, tls };
  const name = decodeURIComponent(path ?? '');
  if (!name) throw new Error('a redis+sentinel:// URL ends with /<master name>');
  return { kind: 'sentinel', sentinels: nodes, name, auth, tls };
}

/** What every gw connection sets, whatever the topology. */
export interface RedisConnectionOptions {
  lazyConnect?: boolean;
  connectTimeout?: number;
  commandTimeout?: number;
  connectionName?: string;
  enableOfflineQueue?: boolean;
  maxRetriesPerRequest?: number | null;
  /**
   * Commands issued in the same tick go out as one write (and Redis reads them in one go): what concurrent
   * requests send (admissions, settles, log records) costs both ends one system call, not one each.
   */
  enableAutoPipelining?: boolean;
  /** Delay before reconnect attempt `attempt` (1, 2, …), or null to give up. */
  retryStrategy?: (attempt: number) => number | null;
}

export type RedisConnection = Redis | Cluster;

/**
 * One connection to the topology REDIS_URL names: a Redis (one server, or the master Sentinel names, followed
 * across failovers) or a Cluster (commands routed by slot, redirections followed).
 */
export function connectRedis(url: string, options: RedisConnectionOptions): RedisConnection {
  const topology = parseRedisTopology(url);
  const { retryStrategy, ...common } = options;
  const server: RedisOptions = { ...common, ...(retryStrategy && { retryStrategy }) };
  if (topology.kind === 'server') return new Redis(url, server);
  const tls = topology.tls ? { tls: {} } : {};
  if (topology.kind === 'sentinel') {
    return new Redis({
      ...server,
      ...topology.auth,
      ...tls,
      sentinels: topology.sentinels,
      name: topology.name,
      // Told of a failover by the Sentinels (not only by a broken connection), and a write refused by a
      // master that just stepped down (READONLY) is sent again once connected to the new one.
      failoverDetector: true,
      reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
      ...(retryStrategy && { sentinelRetryStrategy: retryStrategy }),
    });
  }
  const { lazyConnect, enableOfflineQueue, enableAutoPipelining, ...perNode } = server;
  const cluster: ClusterOptions = {
    ...(lazyConnect !== undefined && { lazyConnect }),
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    ...(enableAutoPipelining !== undefined && { enableAutoPipelining }),
    ...(retryStrategy && { clusterRetryStrategy: retryStrategy }),
    redisOptions: { ...perNode, ...topology.auth, ...tls },
  };
  return new Cluster(topology.nodes, cluster);
}
