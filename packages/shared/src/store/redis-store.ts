import { assertAdmitRequest, parseReservation } from './admission.ts';
import {
  type AdmissionScripts,
  admissionScripts,
  admitArguments,
  admitResult,
  readAdmissionScripts,
  settleArguments,
} from './redis-admission-scripts.ts';
import { RedisChannels } from './redis-channels.ts';
import type { RedisConnection } from './redis-connection.ts';
import { openCommandConnection, quit } from './redis-store-connections.ts';
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

/**
 * The cluster-mode Store, on one Redis, a Redis Cluster or a Sentinel-watched master (REDIS_URL). Documents
 * are one hash per collection (`<prefix>doc:<collection>`, JSON text), counters of admission are
 * `<prefix>{gov}counter:…` with an expiry (with the reservations, in the one slot of `{gov}`), the routers' reports
 * of a request's calls are a list `<prefix>calls:<request id>` with an expiry, claims are `<prefix>claim:<name>`
 * with an expiry, pub/sub channels
 * are `<prefix>channel:<name>` with their message counts at `<prefix>changes:<name>` (redis-channels.ts).
 */
export class RedisStore implements Store {
  private readonly connection: RedisConnection;
  private readonly prefix: string;
  private readonly reportError: (error: unknown) => void;
  /** Admissions and settles of one turn of the event loop: each kind sent as one script call, both in one write. */
  private readonly scripts: AdmissionScripts;
  private readonly channels: RedisChannels;
  private closing: Promise<void> | undefined;

  private constructor(
    connection: RedisConnection,
    options: RedisStoreOptions & { scripts: AdmissionScripts; reportError: (error: unknown) => void },
  ) {
    this.connection = connection;
    this.scripts = options.scripts;
    this.prefix = options.prefix;
    this.reportError = options.reportError;
    this.channels = new RedisChannels({
      connection,
      url: options.url,
      prefix: options.prefix,
      reportError: options.reportError,
    });
  }

  /** Connects and waits until Redis is ready; rejects after a few attempts when it cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const lua = await readAdmissionScripts();
    const reportError = options.onError ?? reportAsWarning;
    const connection = await openCommandConnection({
      url: options.url,
      prefix: options.prefix,
      commandTimeoutMs: options.commandTimeoutMs ?? 500,
      reportError,
    });
    return new RedisStore(connection, {
      ...options,
      scripts: admissionScripts(connection, lua),
      reportError,
    });
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
    const reply = await this.scripts.call(
      'admit',
      [this.reservationsKey(), this.deadlinesKey(), this.settledKey(request.reservation?.id ?? ''), ...keys],
      admitArguments(groups, request.reservation),
    );
    return admitResult(reply);
  }

  async settleReservation(request: SettleReservationRequest): Promise<boolean> {
    const reply = await this.scripts.call(
      'settle',
      [
        this.reservationsKey(),
        this.deadlinesKey(),
        this.settledKey(request.id),
        ...request.adjustments.map((adjustment) => this.counterKey(adjustment.key)),
      ],
      settleArguments(request),
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

  async reportCall(requestId: string, report: string, ttlMs: number): Promise<void> {
    const key = this.callReportsKey(requestId);
    // Two commands of one key, sent in the tick's pipeline with whatever else the process sends.
    await Promise.all([this.connection.rpush(key, report), this.connection.pexpire(key, ttlMs)]);
  }

  readCallReports(requestId: string): Promise<string[]> {
    return this.connection.lrange(this.callReportsKey(requestId), 0, -1);
  }

  async claim(name: string, holder: string, ttlMs: number): Promise<string> {
    // One command: set when absent, and the holder it found otherwise (NX with GET: Redis 7).
    const found = await this.connection.set(this.claimKey(name), holder, 'PX', ttlMs, 'NX', 'GET');
    return found ?? holder;
  }

  async readCounters(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const values = await this.connection.mget(...keys.map((key) => this.counterKey(key)));
    return values.map((value) => Number(value ?? 0));
  }

  publish(channel: string, message: string): Promise<void> {
    return this.channels.publish(channel, message);
  }

  changeCount(channel: string): Promise<number> {
    return this.channels.changeCount(channel);
  }

  subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>> {
    return this.channels.subscribe(channel, handler);
  }

  async markEpoch(candidate: string): Promise<string> {
    await this.connection.set(this.epochKey(), candidate, 'NX');
    return (await this.readEpoch()) ?? candidate;
  }

  async readEpoch(): Promise<string | undefined> {
    return (await this.connection.get(this.epochKey())) ?? undefined;
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
    await Promise.all([quit(this.connection), this.channels.close()]);
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

  /** A request's call reports: a list, not in `{gov}` (read by the sweeper only, never inside a script). */
  private callReportsKey(requestId: string): string {
    return `${this.prefix}calls:${requestId}`;
  }

  /** A claim (`claim`): a string with an expiry, not in `{gov}` (never read inside a script). */
  private claimKey(name: string): string {
    return `${this.prefix}claim:${name}`;
  }

  private epochKey(): string {
    return `${this.prefix}epoch`;
  }

  private documentKey(collection: string): string {
    return `${this.prefix}doc:${collection}`;
  }
}

function reportAsWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)));
}
