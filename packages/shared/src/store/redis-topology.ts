// What REDIS_URL names, read without loading a Redis client: the environment schema validates the URL with it.

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
