/**
 * The one state interface of gw. Two implementations pass one contract suite
 * (packages/testkit/src/store-contract.ts): MemoryStore (embedded mode, persisted to a data directory) and
 * RedisStore (cluster mode). Atomic operations are plain synchronous code in memory and Lua scripts on Redis.
 *
 * Values are JSON documents; callers read them back through a schema (`defineCollection`, collection.ts).
 * Disposing a store closes it.
 */
export interface Store extends AsyncDisposable {
  /** A document of a collection, or undefined. */
  get(collection: string, id: string): Promise<unknown>;
  /** Every document of a collection, in no particular order. */
  list(collection: string): Promise<Array<{ id: string; value: unknown }>>;
  put(collection: string, id: string, value: unknown): Promise<void>;
  /** True when the document existed. */
  delete(collection: string, id: string): Promise<boolean>;

  /**
   * Governance admission, all or nothing: every `required` check must pass, and when `alternatives` are given
   * at least one group must pass. On success the amounts of the required checks and of the FIRST passing
   * alternative are added, and the reservation (if any) is recorded. The checks of one owner are one atomic
   * step; owners are taken in the order their first check comes, what earlier owners counted given back when a
   * later one refuses (so nothing ever passes a limit, but a refusal can be spurious under contention). Every
   * alternative's checks share one owner.
   */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /**
   * Applies a reservation's final adjustments exactly once: false (and nothing applied) when the
   * reservation was already settled or never existed.
   */
  settleReservation(request: SettleReservationRequest): Promise<boolean>;
  /** An open reservation as admission recorded it; undefined once settled, or when it never existed. */
  readReservation(id: string): Promise<DueReservation | undefined>;
  /** Reservations whose deadline passed without a settle, oldest first (for the sweeper). */
  dueReservations(nowMs: number, limit: number): Promise<DueReservation[]>;
  /**
   * Appends the report of one routed call to its request's (what the router served: the settle of a call the
   * ingress lost reads it), all of them forgotten `ttlMs` after the latest.
   */
  reportCall(requestId: string, report: string, ttlMs: number): Promise<void>;
  /** The reports of a request's routed calls, oldest first; none once forgotten. */
  readCallReports(requestId: string): Promise<string[]>;
  /** Current values of counters (a bare key is one of the default owner); 0 for a counter that does not exist. */
  readCounters(counters: ReadonlyArray<string | CounterName>): Promise<number[]>;
  /**
   * Claims `name` for `holder` when no one holds it, atomically, for `ttlMs`; answers who holds it now (`holder`
   * when this call claimed it, or it held it already). What happens once however many processes race for it (a
   * batch charged at its first read).
   */
  claim(name: string, holder: string, ttlMs: number): Promise<string>;

  /**
   * Publishes to every subscriber of the channel, in this process and (Redis) in every other one. Each
   * message is numbered (1, 2, … per channel, handed to subscribers beside it): pub/sub delivers at most once,
   * so a subscriber finds a message it missed (its connection was down) as a number it never received.
   */
  publish(channel: string, message: string): Promise<void>;
  /** The number of the last message published on the channel (0 when none was, since the data began). */
  changeCount(channel: string): Promise<number>;
  /**
   * The marker of the store's data: set to `candidate` when there is none, and returned as it is. A marker
   * that disappears, or changes, means the data was lost (a Redis restarted without persistence).
   */
  markEpoch(candidate: string): Promise<string>;
  /** The marker, or undefined when there is none. */
  readEpoch(): Promise<string | undefined>;
  /**
   * Subscribes; the returned function unsubscribes. Each message is delivered once per subscription, with its
   * number; arrival order is not promised (Redis Cluster relays a PUBLISH between nodes, so two messages sent
   * through different nodes can arrive swapped), so a message is a notice to read the store, not a change log.
   */
  subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>>;

  /** Writes pending state (memory: the data directory) and releases connections. */
  close(): Promise<void>;
}

/** Receives a published message and its number on the channel. */
export type MessageHandler = (message: string, sequence: number) => void;

/**
 * A counter: its key and its owner (`key:<id>`, `team:<id>`…), whose counters share one hash tag on Redis, so
 * that one owner's checks are one atomic script on one slot of a Redis Cluster. Without an owner a counter is
 * the default owner's (`gov`).
 */
export interface CounterName {
  key: string;
  owner?: string | undefined;
}

/** One counter of an admission: passes when `current + need <= limit`; `amount` is added on success. */
export interface CounterCheck extends CounterName {
  limit: number;
  need: number;
  amount: number;
  /** When the counter may be forgotten (its period ended), epoch ms. */
  expireAtMs: number;
}

export interface AdmitRequest {
  required: CounterCheck[];
  /** Groups of checks, in preference order (for example one group per routing target). */
  alternatives: CounterCheck[][];
  /** Recorded only when admitted; settled later by settleReservation or charged by the sweeper. */
  reservation?: { id: string; deadlineMs: number; payload: string };
}

/** The check a refused admission found exhausted: group -1 is `required`, otherwise the index of the alternative. */
export interface FailedCheck {
  group: number;
  index: number;
  /** The counter's value when it refused. */
  current: number;
}

/**
 * An admission's answer: admitted, or refused by the check it names. A refusal always names one: what a store
 * cannot decide (a request whose first admission stalled elsewhere) is an error, never a refusal.
 */
export type AdmitResult =
  | {
      allowed: true;
      /** Indexes of the alternatives whose checks all pass. */
      passing: number[];
      /**
       * The reservation was admitted before (or settled already): nothing was counted again, `passing` holds the
       * alternative admitted then.
       */
      duplicate?: boolean;
    }
  | {
      allowed: false;
      /** The first failing check. */
      failed: FailedCheck;
      /** Indexes of the alternatives whose checks all pass. */
      passing: number[];
    };

/** A reservation left unsettled past its deadline. */
export interface DueReservation {
  id: string;
  payload: string;
  /** The alternative whose amounts were added at admission (-1 when there were none). */
  alternative: number;
}

export interface CounterAdjustment extends CounterName {
  delta: number;
  expireAtMs: number;
}

export interface SettleReservationRequest {
  id: string;
  adjustments: CounterAdjustment[];
}

/** One ingress's slice of a counter, as its owner's slot holds it (docs/governance.md "Allowances"). */
export interface SliceRequest {
  counter: CounterName;
  /** The ingress's id. */
  holder: string;
  /** How much more to take (0: only renew the lease and report `used`). */
  want: number;
  /** The counter's limit now. */
  limit: number;
  /** What the holder admitted from its slice so far. */
  used: number;
  /** How far past `used` the holder may admit before it asks again. */
  step: number;
  leaseMs: number;
  expireAtMs: number;
}

/** A slice after a take: what the holder has taken and may admit up to; `fresh` when it had none before. */
export interface Slice {
  taken: number;
  armed: number;
  granted: boolean;
  fresh: boolean;
}

/** What allowances need of a store besides admission (RedisStore). */
export interface SliceSource {
  /** False while the store's connection is down (admission then answers what the store answers: 503). */
  connected(): boolean;
  takeSlice(request: SliceRequest): Promise<Slice>;
  /** Gives back `taken - used` and forgets the holder's slice; what went back. */
  returnSlice(request: { counter: CounterName; holder: string; used: number }): Promise<number>;
  /** Records a reservation admitted from slices; false when its id was admitted before. */
  recordReservation(
    reservation: NonNullable<AdmitRequest['reservation']>,
    alternative: number,
  ): Promise<boolean>;
  /** Adds to counters without a check (a settle's charge past a slice). */
  addToCounters(adjustments: CounterAdjustment[]): Promise<void>;
}
