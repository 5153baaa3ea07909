import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { parseRedisTopology } from './redis-topology.ts';

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
  /**
   * Commands never auto-pipelined on a Cluster: ioredis groups a command into the pipeline of the node its
   * first argument hashes to, and a script's first argument is its number of keys, not a key. Put in the
   * pipeline of another node than its keys', it fails that whole pipeline ("All keys in the pipeline should
   * belong to the same slots allocation group"), taking the other commands of the tick with it.
   */
  autoPipeliningIgnoredCommands?: string[];
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
  const { retryStrategy, autoPipeliningIgnoredCommands, ...common } = options;
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
    ...(autoPipeliningIgnoredCommands && { autoPipeliningIgnoredCommands }),
    ...(retryStrategy && { clusterRetryStrategy: retryStrategy }),
    redisOptions: { ...perNode, ...topology.auth, ...tls },
  };
  return new Cluster(topology.nodes, cluster);
}
