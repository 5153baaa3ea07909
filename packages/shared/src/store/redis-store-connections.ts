import { Cluster } from 'ioredis';
import { GatewayError } from '../errors/gateway-error.ts';
import { SCRIPT_COMMANDS } from './redis-admission-scripts.ts';
import { connectRedis, type RedisConnection } from './redis-connection.ts';

// The RedisStore's two connections: commands (opened at connect, failing fast once up) and pub/sub (opened on
// first subscribe, reconnecting and re-subscribing for as long as it takes).

/** Attempts at the first connection; after it, ioredis reconnects for as long as it takes. */
const CONNECT_ATTEMPTS = 5;
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The command connection, once Redis is ready (rejects after a few attempts when it cannot be reached), with
 * every command's failure while Redis is unreachable turned into 503 service_unavailable.
 */
export async function openCommandConnection(options: {
  url: string;
  prefix: string;
  commandTimeoutMs: number;
  reportError: (error: unknown) => void;
}): Promise<RedisConnection> {
  const state = { everReady: false };
  const connection = connectRedis(options.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Null ends the retries: a gateway started against a wrong URL should fail, not hang.
    retryStrategy: (attempt) =>
      state.everReady || attempt < CONNECT_ATTEMPTS ? Math.min(attempt * 200, 2_000) : null,
    commandTimeout: options.commandTimeoutMs,
    connectionName: connectionName(options.prefix, 'store'),
    enableAutoPipelining: true,
    // The admission scripts (redis-admission-scripts.ts) go out on their own: already one call a turn.
    autoPipeliningIgnoredCommands: [...SCRIPT_COMMANDS],
  });
  await waitUntilReady(connection, options.url);
  state.everReady = true;
  failFastAfterStart(connection);
  connection.on('error', options.reportError);
  return failFast(connection);
}

/** The pub/sub connection: it keeps its offline queue, so ioredis re-subscribes by itself after a reconnect. */
export function openSubscriberConnection(options: {
  url: string;
  prefix: string;
  reportError: (error: unknown) => void;
}): RedisConnection {
  const subscriber = connectRedis(options.url, {
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    connectionName: connectionName(options.prefix, 'pubsub'),
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  subscriber.on('error', options.reportError);
  return subscriber;
}

/** Quits after what was sent before (QUIT answers after it); drops the socket when that cannot be done. */
export async function quit(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end') return;
  try {
    await connection.quit();
  } catch {
    // Already closing or unreachable: nothing is left to flush, so drop the socket.
    connection.disconnect();
  }
}

/** What `CLIENT LIST` names a connection (`<prefix><role>`, so operators and tests can tell gw's apart). */
function connectionName(prefix: string, role: string): string {
  return `${prefix}${role}`.replace(/[^\x21-\x7e]/g, '_');
}

const CONNECTION_METHODS = new Set(['connect', 'disconnect', 'quit', 'duplicate', 'defineCommand']);

function unavailable(cause: unknown): GatewayError {
  return new GatewayError({
    type: 'service_unavailable',
    message: 'the state store (Redis) is unavailable; retry shortly',
    retryAfter: 1,
    cause,
  });
}

/**
 * Reads that are tried once more when they time out on a connection that is up. A command's timer and its
 * answer can both be due when the event loop was busy (a process loading its modules at start on a loaded
 * machine): timers run first, so the answer that had arrived counts as a timeout. The second try runs after.
 */
const READS = new Set([
  'get',
  'hget',
  'hgetall',
  'hmget',
  'mget',
  'exists',
  'smembers',
  'zrange',
  'zcard',
  'xrange',
  'xrevrange',
  'xlen',
  'pttl',
]);

/**
 * The connection with every command's failure while Redis is unreachable turned into 503
 * service_unavailable, so no caller hangs and every transport answers the same retryable error.
 */
function failFast(connection: RedisConnection): RedisConnection {
  return new Proxy(connection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || CONNECTION_METHODS.has(property))
        return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const retried = READS.has(property)
          ? result.catch((error: unknown) => {
              if (target.status !== 'ready' || !/timed out/i.test(String(error))) throw error;
              return value.apply(target, args) as Promise<unknown>;
            })
          : result;
        return retried.catch((error: unknown) => {
          if (
            target.status !== 'ready' ||
            /closed|ECONNREFUSED|ECONNRESET|writeable|MaxRetriesPerRequest|timed out/i.test(String(error))
          ) {
            throw unavailable(error);
          }
          throw error;
        });
      };
    },
  });
}

/**
 * Once up, a command must not wait for a Redis that is gone: it fails at once (no offline queue, one retry of
 * what was in flight) and callers answer 503 instead of hanging. A Cluster connects to each node on its first
 * command there, so its nodes keep their queues; the command timeout bounds what waits in them.
 */
function failFastAfterStart(connection: RedisConnection): void {
  connection.options.enableOfflineQueue = false;
  if (!(connection instanceof Cluster)) connection.options.maxRetriesPerRequest = 1;
}

function waitUntilReady(connection: RedisConnection, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let lastError: unknown;
    const onError = (error: unknown) => {
      lastError = error;
    };
    const onReady = () => {
      connection.off('error', onError);
      connection.off('end', onEnd);
      resolve();
    };
    // 'end' comes once the retry strategy gives up.
    const onEnd = () => {
      connection.off('error', onError);
      connection.off('ready', onReady);
      const reason = lastError instanceof Error ? lastError.message : 'connection closed';
      reject(
        new Error(
          `Redis at ${describeUrl(url)} is unreachable after ${CONNECT_ATTEMPTS} attempts: ${reason}`,
          {
            cause: lastError,
          },
        ),
      );
    };
    connection.on('error', onError);
    connection.once('ready', onReady);
    connection.once('end', onEnd);
    // Its rejection only reports the first failed attempt; the outcome is 'ready' or 'end'.
    connection.connect().catch(() => undefined);
  });
}

/** The URL without credentials, for error messages. */
function describeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}
