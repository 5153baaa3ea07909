import { serviceUnavailable } from '../errors/gateway-error.ts';
import {
  type AdmissionStep,
  admissionSteps,
  assertAdmitRequest,
  counterTtlMs,
  DEFAULT_OWNER,
  parseReservation,
  stepAdditions,
} from './admission.ts';
import { JOURNAL_SHARDS, journalShard, OLD_JOURNAL_SHARDS } from './journal-shard.ts';
import {
  type AdmissionScripts,
  abandonResult,
  addArguments,
  admissionScripts,
  readAdmissionScripts,
  recordResult,
  releaseArguments,
  settleArguments,
  sliceResult,
  takeArguments,
  takeResult,
} from './redis-admission-scripts.ts';
import { RedisChannels } from './redis-channels.ts';
import type { RedisConnection } from './redis-connection.ts';
import {
  migrateOneTagLayout,
  type OneTagMigrationPlan,
  type OneTagMigrationResult,
  reshardJournal,
} from './redis-migration.ts';
import { openCommandConnection, quit } from './redis-store-connections.ts';
import { parseRedisTopology } from './redis-topology.ts';
import type {
  AdmitRequest,
  AdmitResult,
  CounterAdjustment,
  CounterName,
  DueReservation,
  FailedCheck,
  MessageHandler,
  SettleReservationRequest,
  Slice,
  SliceRequest,
  SliceSource,
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
 * `<prefix>{<owner>}counter:…` with an expiry (each owner's in its own slot: `{key:<id>}`, `{team:<id>}`…), the
 * journal of reservations is spread over `<prefix>{res:<0-15>}…`, the routers' reports of a request's calls are a
 * list `<prefix>calls:<request id>` with an expiry, claims are `<prefix>claim:<name>` with an expiry, pub/sub
 * channels are `<prefix>channel:<name>` with their message counts at `<prefix>changes:<name>`
 * (redis-channels.ts).
 */
export class RedisStore implements Store, SliceSource {
  private readonly connection: RedisConnection;
  private readonly prefix: string;
  private readonly reportError: (error: unknown) => void;
  /** Admissions and settles of one turn of the event loop: each kind sent as one script call, both in one write. */
  private readonly scripts: AdmissionScripts;
  private readonly channels: RedisChannels;
  /** A Redis Cluster runs a script on one slot: batches are then per hash tag, else one per script. */
  private readonly batchPerSlot: boolean;
  private closing: Promise<void> | undefined;

  private constructor(
    connection: RedisConnection,
    options: RedisStoreOptions & { scripts: AdmissionScripts; reportError: (error: unknown) => void },
  ) {
    this.connection = connection;
    this.scripts = options.scripts;
    this.prefix = options.prefix;
    this.reportError = options.reportError;
    this.batchPerSlot = parseRedisTopology(options.url).kind === 'cluster';
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
    // Each owner's checks are one atomic step on its slot, taken in order; a refusal gives back what the steps
    // before it counted. Nothing is ever counted past a limit; a refusal can be spurious under contention.
    const id = request.reservation?.id ?? '';
    const attempted: AdmissionStep[] = [];
    const taken: CounterAdjustment[] = [];
    let passing = request.alternatives.every((group) => group.length === 0)
      ? request.alternatives.map((_, index) => index)
      : [];
    try {
      for (const step of admissionSteps(request)) {
        attempted.push(step);
        const result = await this.take(step, id);
        if (result === 'taken-before') {
          attempted.pop();
          await this.giveBack(id, attempted, taken);
          return await this.admittedElsewhere(id);
        }
        if (!result.allowed) {
          attempted.pop();
          await this.giveBack(id, attempted, taken);
          const earlier = id === '' ? undefined : await this.admittedBefore(id);
          if (earlier) return earlier;
          const mine = step.alternatives.length > 0 ? result.passing : passing;
          return { allowed: false, passing: mine, failed: refusal(step, result.failed) };
        }
        if (step.alternatives.length > 0) passing = result.passing;
        taken.push(...stepAdditions(step, result.passing));
      }
    } catch (error) {
      // A step without an answer may still run (a stalled Redis runs what it was sent once it resumes): every
      // step sent is released after it, on its connection, so what ran is given back once.
      if (id !== '') this.releaseLater(id, attempted);
      throw error;
    }
    const reservation = request.reservation;
    if (!reservation) return { allowed: true, passing };
    const chosen = passing[0] ?? -1;
    const shard = journalShard(id);
    let recorded: ReturnType<typeof recordResult>;
    try {
      recorded = recordResult(
        await this.scripts.call(
          'record',
          this.journalKeys(shard, id),
          [id, String(reservation.deadlineMs), `${chosen}\n${reservation.payload}`],
          this.batchGroup(`res:${shard}`),
        ),
      );
    } catch (error) {
      // The record may still run: closed after it (a late record then finds it settled), and the steps released.
      this.scripts
        .call('settle', this.journalKeys(shard, id), settleArguments(id), this.batchGroup(`res:${shard}`))
        .catch(() => {});
      this.releaseLater(id, attempted);
      throw error;
    }
    if (!recorded.recorded) {
      await this.giveBack(id, attempted, taken);
      return duplicate(recorded.alternative);
    }
    return { allowed: true, passing };
  }

  async settleReservation(request: SettleReservationRequest): Promise<boolean> {
    // Only an open reservation is settled. Each owner's counters are adjusted once per reservation (a mark on
    // the owner's slot), then the journal closes it once: a settle retried, or raced by the sweeper, adds
    // nothing twice, and a close whose answer was lost has its adjustments behind it.
    // A settle with nothing to add (one admitted from slices: allowance-store.ts) is the journal's close alone.
    const shard = journalShard(request.id);
    if (request.adjustments.some((adjustment) => adjustment.delta !== 0)) {
      if ((await this.connection.hexists(this.reservationsKey(shard), request.id)) === 0) return false;
      await Promise.all(this.addCounters(request.adjustments, 'add', request.id));
    }
    const closed = await this.scripts.call(
      'settle',
      this.journalKeys(shard, request.id),
      settleArguments(request.id),
      this.batchGroup(`res:${shard}`),
    );
    return closed === 1;
  }

  connected(): boolean {
    return this.connection.status === 'ready';
  }

  async takeSlice(request: SliceRequest): Promise<Slice> {
    const { counter } = request;
    const reply = await this.scripts.call(
      'takeSlice',
      [this.counterKey(counter), this.slicesKey(counter)],
      [
        request.holder,
        String(request.want),
        String(request.limit),
        String(request.used),
        String(request.step),
        String(request.leaseMs),
        String(request.expireAtMs),
        String(counterTtlMs(request.expireAtMs)),
      ],
      this.batchGroup(counter.owner ?? DEFAULT_OWNER),
    );
    return sliceResult(reply);
  }

  async returnSlice(request: { counter: CounterName; holder: string; used: number }): Promise<number> {
    const { counter } = request;
    const reply = await this.scripts.call(
      'returnSlice',
      [this.counterKey(counter), this.slicesKey(counter)],
      [request.holder, String(request.used)],
      this.batchGroup(counter.owner ?? DEFAULT_OWNER),
    );
    return Number(reply);
  }

  async recordReservation(
    reservation: NonNullable<AdmitRequest['reservation']>,
    alternative: number,
  ): Promise<boolean> {
    const id = reservation.id;
    const shard = journalShard(id);
    const reply = await this.scripts.call(
      'record',
      this.journalKeys(shard, id),
      [id, String(reservation.deadlineMs), `${alternative}\n${reservation.payload}`],
      this.batchGroup(`res:${shard}`),
    );
    return recordResult(reply).recorded;
  }

  async addToCounters(adjustments: CounterAdjustment[]): Promise<void> {
    await Promise.all(this.addCounters(adjustments));
  }

  async readReservation(id: string): Promise<DueReservation | undefined> {
    const payload = await this.connection.hget(this.reservationsKey(journalShard(id)), id);
    return payload === null ? undefined : parseReservation(id, payload);
  }

  async dueReservations(nowMs: number, limit: number): Promise<DueReservation[]> {
    const shards = await Promise.all(
      Array.from({ length: JOURNAL_SHARDS }, async (_, shard) => {
        const found = await this.connection.zrangebyscore(
          this.deadlinesKey(shard),
          '-inf',
          nowMs,
          'WITHSCORES',
          'LIMIT',
          0,
          limit,
        );
        const due: Array<{ id: string; deadline: number; shard: number }> = [];
        for (let index = 0; index < found.length; index += 2) {
          due.push({ id: found[index]!, deadline: Number(found[index + 1]), shard });
        }
        return due;
      }),
    );
    // Oldest first over every shard.
    const due = shards
      .flat()
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, limit);
    const payloads = await Promise.all(
      due.map(({ id, shard }) => this.connection.hget(this.reservationsKey(shard), id)),
    );
    return due.flatMap(({ id }, index) => {
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

  async readCounters(counters: ReadonlyArray<string | CounterName>): Promise<number[]> {
    // What was used: the counter less what ingresses hold of it in slices and have not spent (as they last
    // reported). Commands of each (owners are in different slots), sent in the tick's pipeline.
    return Promise.all(
      counters.map(async (name) => {
        const counter = typeof name === 'string' ? { key: name } : name;
        const [value, slices] = await Promise.all([
          this.connection.get(this.counterKey(counter)),
          this.connection.hvals(this.slicesKey(counter)),
        ]);
        let held = 0;
        for (const slice of slices) {
          const [taken, , used] = slice.split(':').map(Number);
          held += (taken ?? 0) - (used ?? 0);
        }
        return Number(value ?? 0) - held;
      }),
    );
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

  /**
   * Moves governance state kept under the one `{gov}` tag of earlier releases (an upgraded cluster) to this
   * layout, once per Redis however many processes start (redis-migration.ts); governance says whose each
   * counter is. The reservations of the journal's 16 shards of earlier releases move to their shards of 64 first.
   */
  async migrateOneTagLayout(plan: OneTagMigrationPlan): Promise<OneTagMigrationResult> {
    const target = {
      connection: this.connection,
      prefix: this.prefix,
      counterKey: (counter: CounterName) => this.counterKey(counter),
      journalKeys: (id: string) => this.journalKeys(journalShard(id), id),
      claim: (name: string, holder: string, ttlMs: number) => this.claim(name, holder, ttlMs),
    };
    // The journal's reservations first go to the shards their ids hash to now; the one-tag move then records
    // straight into those.
    const journal = await reshardJournal(target, {
      oldShards: OLD_JOURNAL_SHARDS,
      newShards: JOURNAL_SHARDS,
      shardOf: journalShard,
    });
    const moved = await migrateOneTagLayout(target, plan);
    return {
      ...moved,
      ran: moved.ran || journal.ran,
      resumed: moved.resumed + journal.resumed,
      resharded: journal.reservations,
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

  /** One owner's step of an admission, on its slot, marked with the reservation's id (when there is one). */
  private async take(step: AdmissionStep, id: string): Promise<AdmitResult | 'taken-before'> {
    const groups = [step.required.map(({ check }) => check), ...step.alternatives];
    const keys = [this.takenKey(step.owner, id), ...groups.flat().map((check) => this.counterKey(check))];
    return takeResult(
      await this.scripts.call('take', keys, takeArguments(groups, id), this.batchGroup(step.owner)),
    );
  }

  /**
   * Gives back, once, what the steps of an admission of reservation `id` counted (by their marks). `forget`: the
   * steps answered and the admission was refused, so their marks are deleted and the request may be admitted
   * again; otherwise (steps without an answer, which may run later) a mark stays that a late take finds.
   */
  private release(id: string, steps: AdmissionStep[], options: { forget: boolean }): Array<Promise<unknown>> {
    return steps.map((step) => {
      const checks = [...step.required.map(({ check }) => check), ...step.alternatives.flat()];
      return this.scripts.call(
        'release',
        [this.takenKey(step.owner, id), ...checks.map((check) => this.counterKey(check))],
        releaseArguments(checks, options),
        this.batchGroup(step.owner),
      );
    });
  }

  /** Releases the steps of an admission that failed without an answer; reported, not thrown, when it fails. */
  private releaseLater(id: string, steps: AdmissionStep[]): void {
    for (const releasing of this.release(id, steps, { forget: false })) releasing.catch(this.reportError);
  }

  /** Adds to counters, one script call per owner (each on its slot); resolves when every owner's is done. */
  private addCounters(
    adjustments: CounterAdjustment[],
    script: 'add' | 'giveBack' = 'add',
    reservationId = '',
  ): Array<Promise<unknown>> {
    const byOwner = new Map<string, CounterAdjustment[]>();
    for (const adjustment of adjustments) {
      if (adjustment.delta === 0) continue;
      const owner = adjustment.owner ?? DEFAULT_OWNER;
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), adjustment]);
    }
    return [...byOwner].map(([owner, owned]) =>
      this.scripts.call(
        script,
        [
          this.ownerSettledKey(owner, reservationId),
          ...owned.map((adjustment) => this.counterKey(adjustment)),
        ],
        addArguments(owned, reservationId),
        this.batchGroup(owner),
      ),
    );
  }

  /**
   * Gives back what the steps of a refused (or duplicate) admission counted, before it answers (the sooner it
   * is back, the fewer refusals it causes). A give-back that fails leaves the amounts counted (never over) and
   * is reported, not thrown: the admission has its answer.
   */
  private async giveBack(id: string, steps: AdmissionStep[], taken: CounterAdjustment[]): Promise<void> {
    const giving =
      id === ''
        ? this.addCounters(
            taken.map((adjustment) => ({ ...adjustment, delta: -adjustment.delta })),
            'giveBack',
          )
        : this.release(id, steps, { forget: true });
    await Promise.all(giving.map((given) => given.catch(this.reportError)));
  }

  /** A refused admission's id admitted before (a request asked twice): its first admission's answer. */
  private async admittedBefore(id: string): Promise<AdmitResult | undefined> {
    const shard = journalShard(id);
    const [stored, settled] = await Promise.all([
      this.connection.hget(this.reservationsKey(shard), id),
      this.connection.exists(this.settledKey(shard, id)),
    ]);
    if (stored !== null) return duplicate(parseReservation(id, stored).alternative);
    return settled === 1 ? duplicate(-1) : undefined;
  }

  /**
   * An admission of reservation `id` whose step another admission of the same id took (or released) before: a
   * request asked again, its first try unanswered. Recorded, it was admitted before: that admission's answer. Not
   * recorded, that admission is under way in a process that stopped answering (a replica frozen between its
   * steps and its record), or it failed: the id is closed, so that its record, if it ever runs, finds it settled
   * and gives its steps back, and this one answers 503. Never a refusal: no limit was found exhausted.
   */
  private async admittedElsewhere(id: string): Promise<AdmitResult> {
    const shard = journalShard(id);
    const closed = abandonResult(
      await this.scripts.call(
        'abandon',
        [this.reservationsKey(shard), this.settledKey(shard, id)],
        settleArguments(id),
        this.batchGroup(`res:${shard}`),
      ),
    );
    if (!closed.abandoned) return duplicate(closed.alternative);
    throw serviceUnavailable(
      "this request's admission was interrupted (the process that began it stopped answering); retry it",
    );
  }

  /** The batch a script call of this hash tag joins: its slot's on a Redis Cluster, the one batch otherwise. */
  private batchGroup(tag: string): string {
    return this.batchPerSlot ? tag : '';
  }

  // Every key an admission or a settle touches carries a hash tag: an owner's counters share one (`{team:<id>}`),
  // as do the keys of one shard of the journal (`{res:<n>}`); on Redis Cluster each script runs on one node,
  // atomically (README, "Redis topologies").

  private counterKey(counter: CounterName): string {
    return `${this.prefix}{${counter.owner ?? DEFAULT_OWNER}}counter:${counter.key}`;
  }

  /** The mark of an owner's counters adjusted by a reservation's settle (they expire: SETTLED_MARK_MS). */
  private ownerSettledKey(owner: string, id: string): string {
    return `${this.prefix}{${owner}}settled:${id}`;
  }

  /** The slices ingresses hold of a counter (take-slice-2.lua). */
  private slicesKey(counter: CounterName): string {
    return `${this.prefix}{${counter.owner ?? DEFAULT_OWNER}}slices:${counter.key}`;
  }

  /** The mark of an owner's step of an admission (what it added, until released). */
  private takenKey(owner: string, id: string): string {
    return `${this.prefix}{${owner}}taken:${id}`;
  }

  /** The journal's keys of a reservation in its shard (`journalShard(id)`, computed once by the caller). */
  private journalKeys(shard: number, id: string): string[] {
    return [this.reservationsKey(shard), this.deadlinesKey(shard), this.settledKey(shard, id)];
  }

  private reservationsKey(shard: number): string {
    return `${this.prefix}{res:${shard}}reservations`;
  }

  private deadlinesKey(shard: number): string {
    return `${this.prefix}{res:${shard}}reservation-deadlines`;
  }

  /** The mark of a settled reservation (it expires: SETTLED_MARK_MS). */
  private settledKey(shard: number, id: string): string {
    return `${this.prefix}{res:${shard}}settled:${id}`;
  }

  /** A request's call reports: a list, in no hash tag (read by the sweeper only, never inside a script). */
  private callReportsKey(requestId: string): string {
    return `${this.prefix}calls:${requestId}`;
  }

  /** A claim (`claim`): a string with an expiry, in no hash tag (never read inside a script). */
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

/** The answer to an admission of a reservation id admitted before: nothing counted again. */
function duplicate(alternative: number): AdmitResult {
  return { allowed: true, passing: alternative >= 0 ? [alternative] : [], duplicate: true };
}

/** A refused step's failure, with its index in the whole admission's `required`. */
function refusal(step: AdmissionStep, failed: FailedCheck): FailedCheck {
  if (failed.group !== -1) return failed;
  return { ...failed, index: step.required[failed.index]!.index };
}

function reportAsWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)));
}
