import { readFile } from 'node:fs/promises';
import { Cluster } from 'ioredis';
import { GatewayError } from '../errors/gateway-error.ts';
import { assertAdmitRequest, counterTtlMs, parseReservation, SETTLED_MARK_MS } from './admission.ts';
import { connectRedis, type RedisConnection } from './redis-connection.ts';
import { batchedScript, ScriptBatches } from './script-batch.ts';
import type {
  AdmitRequest,
  AdmitResult,
  DueReservation,
  MessageHandler,
  SettleReservationRequest,
  Store,
} from './store.ts';

export interface RedisStoreOptions {
  url: string;
  /** Put before every key and channel name (e.g. `gw:`), so deployments and test runs can share one Redis. */
  prefix: string;
  /**
   * Told about failures that have no caller to throw to: connection errors, a subscriber that throws, a
   * corrupt document. Process warnings by default.
   */
  onError?: (error: unknown) => void;
  /**
   * Most time one command may wait for Redis (a stalled or partitioned Redis answers nothing): past it the
   * command fails with 503 rather than holding the request. 500 ms by default (below the 1 s deadline of
   * gRPC calls, so governance answers before its caller gives up).
   */
  commandTimeoutMs?: number;
}

/** Attempts at the first connection; after it, ioredis reconnects for as long as it takes. */
const CONNECT_ATTEMPTS = 5;
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long a settle may wait to share a write to Redis with the next admissions (they are sent at the end of
 * their turn of the event loop); settles are off every request's critical path.
 */
const SETTLE_LINGER_MS = 2;

const ADMIT_COUNTERS_LUA = new URL('./lua/admit-counters-n.lua', import.meta.url);
const SETTLE_RESERVATION_LUA = new URL('./lua/settle-reservation-4.lua', import.meta.url);
/** The main connection with the commands that defineCommand adds for the Lua scripts of lua/ (batched). */
type ScriptedRedis = RedisConnection & {
  admitCounters(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
  settleReservation(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
};

/** admit-counters-n.lua's reply: allowed, failed group, failed index, failed current, passing (JSON), duplicate. */
function admitReply(reply: unknown): [0 | 1, number, number, number, number[], 0 | 1] {
  if (Array.isArray(reply) && reply.length === 6 && typeof reply[4] === 'string') {
    const [allowed, group, index, current, passingText, duplicate] = reply as unknown[];
    const passing: unknown = JSON.parse(passingText as string);
    if (
      (allowed === 0 || allowed === 1) &&
      (duplicate === 0 || duplicate === 1) &&
      typeof group === 'number' &&
      typeof index === 'number' &&
      typeof current === 'number' &&
      Array.isArray(passing) &&
      passing.every((entry) => typeof entry === 'number')
    ) {
      return [allowed, group, index, current, passing, duplicate];
    }
  }
  throw new Error(`malformed admission reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);
}

interface ChannelSubscriptions {
  subscriptions: Set<Subscription>;
  /** Settles when Redis has confirmed SUBSCRIBE, so no subscriber returns before messages can arrive. */
  subscribed: Promise<unknown>;
}

interface Subscription {
  handler: MessageHandler;
}

/**
 * The cluster-mode Store, on one Redis, a Redis Cluster or a Sentinel-watched master (REDIS_URL). Documents
 * are one hash per collection (`<prefix>doc:<collection>`, JSON text), counters of admission are
 * `<prefix>{gov}counter:…` with an expiry (with the reservations, in the one slot of `{gov}`), pub/sub channels
 * are `<prefix>channel:<name>` with their message counts at `<prefix>changes:<name>`.
 */
export class RedisStore implements Store {
  private readonly connection: ScriptedRedis;
  private readonly prefix: string;
  private readonly url: string;
  private readonly channelPrefix: string;
  private readonly reportError: (error: unknown) => void;
  private readonly channels = new Map<string, ChannelSubscriptions>();
  /** Subscribing takes a connection over for good, so pub/sub gets its own, opened on first use. */
  private subscriber: RedisConnection | undefined;
  private closing: Promise<void> | undefined;
  /** Admissions and settles of one turn of the event loop: each kind sent as one script call, both in one write. */
  private readonly scripts: ScriptBatches<'admit' | 'settle'>;

  private constructor(connection: ScriptedRedis, options: RedisStoreOptions) {
    this.connection = connection;
    this.scripts = new ScriptBatches(
      {
        admit: (...call) => connection.admitCounters(...call),
        settle: (...call) => connection.settleReservation(...call),
      },
      { linger: { settle: SETTLE_LINGER_MS } },
    );
    this.prefix = options.prefix;
    this.url = options.url;
    this.channelPrefix = `${options.prefix}channel:`;
    this.reportError = options.onError ?? reportAsWarning;
  }

  /** Connects and waits until Redis is ready; rejects after a few attempts when it cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const [admitLua, settleLua] = await Promise.all(
      [ADMIT_COUNTERS_LUA, SETTLE_RESERVATION_LUA].map((file) => readFile(file, 'utf8')),
    );
    const state = { everReady: false };
    const connection = connectRedis(options.url, {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Null ends the retries: a gateway started against a wrong URL should fail, not hang.
      retryStrategy: (attempt) =>
        state.everReady || attempt < CONNECT_ATTEMPTS ? Math.min(attempt * 200, 2_000) : null,
      commandTimeout: options.commandTimeoutMs ?? 500,
      connectionName: connectionName(options.prefix, 'store'),
      enableAutoPipelining: true,
    }) as ScriptedRedis;
    await waitUntilReady(connection, options.url);
    state.everReady = true;
    failFastAfterStart(connection);
    const store = new RedisStore(failFast(connection), options);
    connection.on('error', (error: unknown) => store.reportError(error));
    connection.defineCommand('admitCounters', { lua: batchedScript(admitLua!) });
    connection.defineCommand('settleReservation', { lua: batchedScript(settleLua!) });
    return store;
  }

  async get(collection: string, id: string): Promise<unknown> {
    const text = await this.connection.hget(this.documentKey(collection), id);
    return text === null ? undefined : this.parseDocument(collection, id, text);
  }

  async list(collection: string): Promise<Array<{ id: string; value: unknown }>> {
    const entries = await this.connection.hgetall(this.documentKey(collection));
    const documents: Array<{ id: string; value: unknown }> = [];
    for (const [id, text] of Object.entries(entries)) {
      const value = this.parseDocument(collection, id, text);
      if (value !== undefined) documents.push({ id, value });
    }
    return documents;
  }

  async put(collection: string, id: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError('A store document must be a JSON value');
    await this.connection.hset(this.documentKey(collection), id, text);
  }

  async delete(collection: string, id: string): Promise<boolean> {
    return (await this.connection.hdel(this.documentKey(collection), id)) === 1;
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    assertAdmitRequest(request);
    const groups = [request.required, ...request.alternatives];
    const keys = groups.flat().map((check) => this.counterKey(check.key));
    const spec = {
      groups: groups.map((group) =>
        group.map((check) => ({
          limit: check.limit,
          need: check.need,
          amount: check.amount,
          expireAt: check.expireAtMs,
          ttl: counterTtlMs(check.expireAtMs),
        })),
      ),
    };
    const reservation = request.reservation;
    const reply = await this.scripts.call(
      'admit',
      [this.reservationsKey(), this.deadlinesKey(), this.settledKey(reservation?.id ?? ''), ...keys],
      [
        // cjson turns an empty Lua table into {}, so groups always hold arrays here, never empty objects.
        JSON.stringify(spec),
        reservation?.id ?? '',
        String(reservation?.deadlineMs ?? 0),
        reservation?.payload ?? '',
      ],
    );
    const [allowed, failedGroup, failedIndex, failedCurrent, passing, duplicate] = admitReply(reply);
    return allowed === 1
      ? { allowed: true, passing, ...(duplicate === 1 && { duplicate: true }) }
      : {
          allowed: false,
          passing,
          ...(failedGroup === -2
            ? {}
            : { failed: { group: failedGroup, index: failedIndex, current: failedCurrent } }),
        };
  }

  async settleReservation(request: SettleReservationRequest): Promise<boolean> {
    const adjustments = request.adjustments.map((adjustment) => ({
      delta: adjustment.delta,
      expireAt: adjustment.expireAtMs,
      ttl: counterTtlMs(adjustment.expireAtMs),
    }));
    const reply = await this.scripts.call(
      'settle',
      [
        this.reservationsKey(),
        this.deadlinesKey(),
        this.settledKey(request.id),
        ...request.adjustments.map((adjustment) => this.counterKey(adjustment.key)),
      ],
      [request.id, adjustments.length === 0 ? '[]' : JSON.stringify(adjustments), String(SETTLED_MARK_MS)],
    );
    return reply === 1;
  }

  async readReservation(id: string): Promise<DueReservation | undefined> {
    const payload = await this.connection.hget(this.reservationsKey(), id);
    return payload === null ? undefined : parseReservation(id, payload);
  }

  async dueReservations(nowMs: number, limit: number): Promise<DueReservation[]> {
    const ids = await this.connection.zrangebyscore(this.deadlinesKey(), '-inf', nowMs, 'LIMIT', 0, limit);
    if (ids.length === 0) return [];
    const payloads = await this.connection.hmget(this.reservationsKey(), ...ids);
    return ids.flatMap((id, index) => {
      const payload = payloads[index];
      return payload === null || payload === undefined ? [] : [parseReservation(id, payload)];
    });
  }

  async readCounters(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const values = await this.connection.mget(...keys.map((key) => this.counterKey(key)));
    return values.map((value) => Number(value ?? 0));
  }

  async publish(channel: string, message: string): Promise<void> {
    // Numbered first, then sent as `<number> <message>`: a subscriber that sees the count move before the
    // message arrives waits for it one check longer.
    const sequence = await this.connection.incr(this.changeCountKey(channel));
    await this.connection.publish(this.channelName(channel), `${sequence} ${message}`);
  }

  async changeCount(channel: string): Promise<number> {
    return Number((await this.connection.get(this.changeCountKey(channel))) ?? 0);
  }

  async markEpoch(candidate: string): Promise<string> {
    await this.connection.set(this.epochKey(), candidate, 'NX');
    return (await this.readEpoch()) ?? candidate;
  }

  async readEpoch(): Promise<string | undefined> {
    return (await this.connection.get(this.epochKey())) ?? undefined;
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>> {
    // Past close(), a subscriber connection opened here would never be quit.
    if (this.closing !== undefined) throw new Error('RedisStore is closed');
    const subscriber = this.subscriberConnection();
    const subscription: Subscription = { handler };
    let entry = this.channels.get(channel);
    if (entry === undefined) {
      // The map is updated before any await, and one connection sends commands in order, so a SUBSCRIBE and
      // an UNSUBSCRIBE racing for the same channel reach Redis in the order they were decided here.
      entry = { subscriptions: new Set(), subscribed: subscriber.subscribe(this.channelName(channel)) };
      this.channels.set(channel, entry);
    }
    entry.subscriptions.add(subscription);
    try {
      await entry.subscribed;
    } catch (error) {
      // The SUBSCRIBE failure is the error worth reporting, not a failed clean-up after it.
      await this.unsubscribe(channel, subscription).catch(() => undefined);
      throw error;
    }
    let unsubscribed: Promise<void> | undefined;
    return () => {
      unsubscribed ??= this.unsubscribe(channel, subscription);
      return unsubscribed;
    };
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    // What waits for its batch is sent before the connection quits (QUIT answers after what came before it).
    this.scripts.flush();
    this.channels.clear();
    await Promise.all([
      quit(this.connection),
      this.subscriber === undefined ? undefined : quit(this.subscriber),
    ]);
  }

  private subscriberConnection(): RedisConnection {
    if (this.subscriber === undefined) {
      // Pub/sub keeps its offline queue: ioredis re-subscribes by itself after a reconnect.
      const subscriber = connectRedis(this.url, {
        connectTimeout: CONNECT_TIMEOUT_MS,
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
        connectionName: connectionName(this.prefix, 'pubsub'),
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      subscriber.on('error', (error: unknown) => this.reportError(error));
      subscriber.on('message', (channelName: string, message: string) => this.deliver(channelName, message));
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }

  private async unsubscribe(channel: string, subscription: Subscription): Promise<void> {
    const entry = this.channels.get(channel);
    if (entry === undefined || !entry.subscriptions.delete(subscription)) return;
    if (entry.subscriptions.size > 0) return;
    this.channels.delete(channel);
    await this.subscriber?.unsubscribe(this.channelName(channel));
  }

  private deliver(channelName: string, payload: string): void {
    if (!channelName.startsWith(this.channelPrefix)) return;
    const entry = this.channels.get(channelName.slice(this.channelPrefix.length));
    if (entry === undefined) return;
    const space = payload.indexOf(' ');
    const sequence = Number(payload.slice(0, space));
    if (space === -1 || !Number.isSafeInteger(sequence)) {
      this.reportError(new Error(`A message on ${channelName} has no number; ignored`));
      return;
    }
    const message = payload.slice(space + 1);
    for (const subscription of entry.subscriptions) {
      try {
        subscription.handler(message, sequence);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  private parseDocument(collection: string, id: string, text: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      // One bad value, written by something other than this class, must not take down every reader.
      this.reportError(
        new Error(`Corrupt JSON in Redis document ${this.documentKey(collection)} ${id}`, { cause: error }),
      );
      return undefined;
    }
  }

  // Every key an admission or a settle touches carries the hash tag `{gov}`: on Redis Cluster they share one
  // slot, so each Lua script runs on one node, atomically (README, "Redis topologies").

  private counterKey(key: string): string {
    return `${this.prefix}{gov}counter:${key}`;
  }

  private reservationsKey(): string {
    return `${this.prefix}{gov}reservations`;
  }

  private deadlinesKey(): string {
    return `${this.prefix}{gov}reservation-deadlines`;
  }

  /** The mark of a settled reservation (it expires: SETTLED_MARK_MS). */
  private settledKey(id: string): string {
    return `${this.prefix}{gov}settled:${id}`;
  }

  private changeCountKey(channel: string): string {
    return `${this.prefix}changes:${channel}`;
  }

  private epochKey(): string {
    return `${this.prefix}epoch`;
  }

  private documentKey(collection: string): string {
    return `${this.prefix}doc:${collection}`;
  }

  private channelName(channel: string): string {
    return `${this.channelPrefix}${channel}`;
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
function failFast(connection: ScriptedRedis): ScriptedRedis {
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

async function quit(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end') return;
  try {
    await connection.quit();
  } catch {
    // Already closing or unreachable: nothing is left to flush, so drop the socket.
    connection.disconnect();
  }
}

/** The URL without credentials, for error messages. */
function describeUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

function reportAsWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)));
}
