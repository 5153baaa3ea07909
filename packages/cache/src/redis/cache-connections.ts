import { readFile } from 'node:fs/promises';
import { connectRedis, type RedisConnection } from '@gw/shared/store';

const PUT_ENTRY_LUA = new URL('./lua/put-entry-3.lua', import.meta.url);
const DELETE_ENTRIES_LUA = new URL('./lua/delete-entries-2.lua', import.meta.url);

/** The command connection with the commands defineCommand adds for the scripts of lua/. */
export type ScriptedRedis = RedisConnection & {
  putEntry(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
  deleteEntries(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
};

export interface CacheConnectionOptions {
  url: string;
  prefix: string;
  commandTimeoutMs?: number | undefined;
  /** Told of connection errors once connected (before, the failure to connect is what is thrown). */
  onError: (error: unknown) => void;
}

/**
 * The cache's two connections, connected: one for commands, and one that pub/sub takes over. Rejects with a
 * message naming Redis (without credentials) when it cannot be reached.
 */
export async function openCacheConnections(
  options: CacheConnectionOptions,
): Promise<{ commands: ScriptedRedis; subscriber: RedisConnection }> {
  const [putLua, deleteLua] = await Promise.all(
    [PUT_ENTRY_LUA, DELETE_ENTRIES_LUA].map((file) => readFile(file, 'utf8')),
  );
  const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);
  const commands = connectRedis(options.url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    // A command fails at once while Redis is away, so a lookup misses instead of waiting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectionName: `${options.prefix}cache`,
    retryStrategy,
  }) as ScriptedRedis;
  // Pub/sub keeps its offline queue: ioredis subscribes again by itself after a reconnect.
  const subscriber = connectRedis(options.url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: null,
    connectionName: `${options.prefix}cache-sync`,
    retryStrategy,
  });
  let connected = false;
  for (const connection of [commands, subscriber]) {
    connection.on('error', (error: unknown) => {
      if (connected) options.onError(error);
    });
  }
  try {
    await Promise.all([commands.connect(), subscriber.connect()]);
    connected = true;
  } catch (error) {
    await Promise.all([closeConnection(commands), closeConnection(subscriber)]);
    throw new Error(`Redis at ${options.url.replace(/\/\/[^@/]*@/, '//')} is unreachable for the cache`, {
      cause: error,
    });
  }
  commands.defineCommand('putEntry', { lua: putLua! });
  commands.defineCommand('deleteEntries', { lua: deleteLua! });
  return { commands, subscriber };
}

export async function closeConnection(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end' || connection.status === 'wait') {
    connection.disconnect();
    return;
  }
  try {
    await connection.quit();
  } catch {
    // Already closing or unreachable: nothing is left to flush, so drop the socket.
    connection.disconnect();
  }
}
