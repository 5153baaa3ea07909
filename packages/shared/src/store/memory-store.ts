import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  admittedAdditions,
  assertAdmitRequest,
  counterTtlMs,
  decideAdmission,
  parseReservation,
  SETTLED_MARK_MS,
} from './admission.ts';
import type {
  AdmitRequest,
  AdmitResult,
  CounterAdjustment,
  CounterName,
  DueReservation,
  MessageHandler,
  SettleReservationRequest,
  Store,
} from './store.ts';

export interface MemoryStoreOptions {
  /** Directory of `store.json`; without it nothing outlives the process. */
  dataDir?: string;
  /**
   * Told about failures that have no caller to throw to: a subscriber that throws, a background save.
   * Process warnings by default.
   */
  onError?: (error: unknown) => void;
}

/** Name of the state file inside the data directory. */
export const STORE_FILE_NAME = 'store.json';

/**
 * Requests whose call reports are kept: in one process a call is never lost, so they serve only a settle that
 * runs late; not persisted (a restarted gateway's routers are gone, its reservations are charged at estimate).
 */
const MAX_CALL_REPORTS = 10_000;

/** Claims kept at most (each is a batch charged, at most a few thousand a day). */
const MAX_CLAIMS = 100_000;

/** Changes are written at most this often, so a burst of writes costs one file write. */
const SAVE_DELAY_MS = 200;

/**
 * Arrays of entries rather than objects keyed by id: ids are caller data, and a key such as `__proto__` must
 * round-trip like any other.
 */
const storeFileSchema = z.object({
  version: z.literal(1),
  documents: z.array(z.object({ collection: z.string(), id: z.string(), value: z.unknown() })),
  counters: z
    .array(z.object({ key: z.string(), value: z.number().int(), expireAtMs: z.number() }))
    .default([]),
  reservations: z
    .array(z.object({ id: z.string(), deadlineMs: z.number(), payload: z.string() }))
    .default([]),
  claims: z.array(z.object({ name: z.string(), holder: z.string(), expireAtMs: z.number() })).default([]),
});

type StoreFile = z.infer<typeof storeFileSchema>;

interface Subscription {
  handler: MessageHandler;
  active: boolean;
}

/**
 * The embedded-mode Store: state in process memory, optionally persisted to `<dataDir>/store.json`.
 * Only one process may use a data directory at a time.
 */
export class MemoryStore implements Store {
  /** Collection → id → the document as JSON text, so callers never share objects with the store. */
  private readonly documents = new Map<string, Map<string, string>>();
  /** Governance counters: value and the time after which they may be forgotten. */
  private readonly counters = new Map<string, { value: number; expireAtMs: number }>();
  private readonly reservations = new Map<string, { deadlineMs: number; payload: string }>();
  /** Reports of routed calls by request id, until they expire (the 10,000 latest requests at most). */
  private readonly callReports = new Map<string, { expireAtMs: number; reports: string[] }>();
  /** Claims (`claim`): their holder and until when they hold (kept in the data directory: a charge is once). */
  private readonly claims = new Map<string, { holder: string; expireAtMs: number }>();
  /** Ids of settled reservations and until when they are remembered (a late admission counts nothing). */
  private readonly settled = new Map<string, number>();
  private readonly subscriptions = new Map<string, Set<Subscription>>();
  /** Messages published per channel (nothing is missed in one process; the count is the Store contract's). */
  private readonly changeCounts = new Map<string, number>();
  private epoch: string | undefined;
  private readonly filePath: string | undefined;
  private readonly reportError: (error: unknown) => void;
  private dirty = false;
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  private constructor(options: MemoryStoreOptions) {
    this.filePath = options.dataDir === undefined ? undefined : path.join(options.dataDir, STORE_FILE_NAME);
    this.reportError = options.onError ?? reportAsWarning;
  }

  /** Opens a store, loading `<dataDir>/store.json` when present. A file that cannot be read is an error. */
  static async open(options: MemoryStoreOptions = {}): Promise<MemoryStore> {
    const store = new MemoryStore(options);
    if (store.filePath !== undefined) {
      await mkdir(path.dirname(store.filePath), { recursive: true, mode: 0o700 });
      const file = await readStoreFile(store.filePath);
      if (file !== undefined) store.load(file);
    }
    return store;
  }

  async get(collection: string, id: string): Promise<unknown> {
    this.assertOpen();
    const text = this.documents.get(collection)?.get(id);
    return text === undefined ? undefined : JSON.parse(text);
  }

  async list(collection: string): Promise<Array<{ id: string; value: unknown }>> {
    this.assertOpen();
    const documents = this.documents.get(collection);
    if (documents === undefined) return [];
    return Array.from(documents, ([id, text]) => ({ id, value: JSON.parse(text) }));
  }

  async put(collection: string, id: string, value: unknown): Promise<void> {
    this.assertOpen();
    const text = toJsonText(value);
    let documents = this.documents.get(collection);
    if (documents === undefined) {
      documents = new Map();
      this.documents.set(collection, documents);
    }
    documents.set(id, text);
    this.scheduleSave();
  }

  async delete(collection: string, id: string): Promise<boolean> {
    this.assertOpen();
    const documents = this.documents.get(collection);
    if (documents === undefined || !documents.delete(id)) return false;
    if (documents.size === 0) this.documents.delete(collection);
    this.scheduleSave();
    return true;
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    this.assertOpen();
    assertAdmitRequest(request);
    const id = request.reservation?.id;
    if (id !== undefined) {
      const existing = this.reservations.get(id);
      if (existing) {
        const chosen = parseReservation(id, existing.payload).alternative;
        return { allowed: true, passing: chosen >= 0 ? [chosen] : [], duplicate: true };
      }
      if ((this.settled.get(id) ?? 0) > Date.now()) return { allowed: true, passing: [], duplicate: true };
    }
    const result = decideAdmission(request, (key) => this.counterValue(key));
    if (!result.allowed) return result;
    this.applyAdjustments(admittedAdditions(request, result));
    if (request.reservation) {
      const { id, deadlineMs, payload } = request.reservation;
      this.reservations.set(id, { deadlineMs, payload: `${result.passing[0] ?? -1}\n${payload}` });
    }
    this.scheduleSave();
    return result;
  }

  async settleReservation(request: SettleReservationRequest): Promise<boolean> {
    this.assertOpen();
    if (!this.reservations.delete(request.id)) return false;
    this.markSettled(request.id);
    this.applyAdjustments(request.adjustments);
    this.scheduleSave();
    return true;
  }

  /** Remembers a settled id for SETTLED_MARK_MS (as RedisStore does), the 100,000 latest at most. */
  private markSettled(id: string): void {
    this.settled.set(id, Date.now() + SETTLED_MARK_MS);
    if (this.settled.size > 100_000) this.settled.delete(this.settled.keys().next().value!);
  }

  async readReservation(id: string): Promise<DueReservation | undefined> {
    this.assertOpen();
    const reservation = this.reservations.get(id);
    return reservation && parseReservation(id, reservation.payload);
  }

  async dueReservations(nowMs: number, limit: number): Promise<DueReservation[]> {
    this.assertOpen();
    return Array.from(this.reservations, ([id, reservation]) => ({ id, ...reservation }))
      .filter((reservation) => reservation.deadlineMs <= nowMs)
      .sort((left, right) => left.deadlineMs - right.deadlineMs)
      .slice(0, limit)
      .map(({ id, payload }) => parseReservation(id, payload));
  }

  async reportCall(requestId: string, report: string, ttlMs: number): Promise<void> {
    this.assertOpen();
    const expireAtMs = Date.now() + ttlMs;
    const kept = this.callReports.get(requestId);
    if (kept) {
      kept.reports.push(report);
      kept.expireAtMs = expireAtMs;
      return;
    }
    if (this.callReports.size >= MAX_CALL_REPORTS)
      this.callReports.delete(this.callReports.keys().next().value!);
    this.callReports.set(requestId, { expireAtMs, reports: [report] });
  }

  async readCallReports(requestId: string): Promise<string[]> {
    this.assertOpen();
    const kept = this.callReports.get(requestId);
    if (!kept) return [];
    if (kept.expireAtMs > Date.now()) return [...kept.reports];
    this.callReports.delete(requestId);
    return [];
  }

  async claim(name: string, holder: string, ttlMs: number): Promise<string> {
    this.assertOpen();
    const nowMs = Date.now();
    const held = this.claims.get(name);
    if (held && held.expireAtMs > nowMs) return held.holder;
    if (!held && this.claims.size >= MAX_CLAIMS) this.forgetExpiredClaims(nowMs);
    this.claims.set(name, { holder, expireAtMs: nowMs + ttlMs });
    this.scheduleSave();
    return holder;
  }

  /** Drops expired claims; past MAX_CLAIMS live ones, the oldest too (bounded, as in Redis by its memory). */
  private forgetExpiredClaims(nowMs: number): void {
    for (const [name, claim] of this.claims) if (claim.expireAtMs <= nowMs) this.claims.delete(name);
    while (this.claims.size >= MAX_CLAIMS) this.claims.delete(this.claims.keys().next().value!);
  }

  async readCounters(counters: ReadonlyArray<string | CounterName>): Promise<number[]> {
    this.assertOpen();
    // One process: every owner's counters are in one map, by key.
    return counters.map((counter) => this.counterValue(typeof counter === 'string' ? counter : counter.key));
  }

  private counterValue(key: string): number {
    const counter = this.counters.get(key);
    if (counter === undefined) return 0;
    if (counter.expireAtMs <= Date.now()) {
      this.counters.delete(key);
      return 0;
    }
    return counter.value;
  }

  private applyAdjustments(adjustments: CounterAdjustment[]): void {
    for (const { key, delta, expireAtMs } of adjustments) {
      if (delta === 0) continue;
      const value = this.counterValue(key) + delta;
      this.counters.set(key, { value, expireAtMs: Date.now() + counterTtlMs(expireAtMs) });
    }
  }

  async publish(channel: string, message: string): Promise<void> {
    this.assertOpen();
    const sequence = (this.changeCounts.get(channel) ?? 0) + 1;
    this.changeCounts.set(channel, sequence);
    const subscriptions = this.subscriptions.get(channel);
    if (subscriptions === undefined) return;
    for (const subscription of subscriptions) {
      // Delivered later, never inside the publisher's stack: the publisher may hold state mid-update.
      queueMicrotask(() => this.deliver(subscription, message, sequence));
    }
  }

  async changeCount(channel: string): Promise<number> {
    this.assertOpen();
    return this.changeCounts.get(channel) ?? 0;
  }

  async markEpoch(candidate: string): Promise<string> {
    this.assertOpen();
    this.epoch ??= candidate;
    return this.epoch;
  }

  async readEpoch(): Promise<string | undefined> {
    this.assertOpen();
    return this.epoch;
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>> {
    this.assertOpen();
    const subscription: Subscription = { handler, active: true };
    let subscriptions = this.subscriptions.get(channel);
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.subscriptions.set(channel, subscriptions);
    }
    subscriptions.add(subscription);
    return async () => {
      // Messages already queued for this subscription are dropped too.
      subscription.active = false;
      const current = this.subscriptions.get(channel);
      current?.delete(subscription);
      if (current?.size === 0) this.subscriptions.delete(channel);
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
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    for (const subscriptions of this.subscriptions.values()) {
      for (const subscription of subscriptions) subscription.active = false;
    }
    this.subscriptions.clear();
    await this.save();
  }

  private assertOpen(): void {
    if (this.closing !== undefined) throw new Error('MemoryStore is closed');
  }

  private deliver(subscription: Subscription, message: string, sequence: number): void {
    if (!subscription.active) return;
    try {
      subscription.handler(message, sequence);
    } catch (error) {
      this.reportError(error);
    }
  }

  private scheduleSave(): void {
    if (this.filePath === undefined) return;
    this.dirty = true;
    if (this.saveTimer !== undefined) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save().catch((error: unknown) => this.reportError(error));
    }, SAVE_DELAY_MS);
    // Shutdown goes through close(), which saves; a pending save must not keep the process alive.
    this.saveTimer.unref();
  }

  /** Writes the state if it changed since the last write; one write at a time. */
  private async save(): Promise<void> {
    // A failed save of someone else is theirs to report; this one retries it, since it left the state dirty.
    while (this.saving !== undefined) await this.saving.catch(() => undefined);
    if (!this.dirty || this.filePath === undefined) return;
    this.dirty = false;
    this.saving = writeFileAtomically(this.filePath, JSON.stringify(this.snapshot()));
    try {
      await this.saving;
    } catch (error) {
      // Left dirty so that the next change, or close(), tries again.
      this.dirty = true;
      throw error;
    } finally {
      this.saving = undefined;
    }
  }

  private snapshot(): StoreFile {
    const documents: StoreFile['documents'] = [];
    for (const [collection, entries] of this.documents) {
      for (const [id, text] of entries) documents.push({ collection, id, value: JSON.parse(text) });
    }
    const nowMs = Date.now();
    const counters = Array.from(this.counters, ([key, counter]) => ({ key, ...counter })).filter(
      (counter) => counter.expireAtMs > nowMs,
    );
    const reservations = Array.from(this.reservations, ([id, reservation]) => ({ id, ...reservation }));
    const claims = Array.from(this.claims, ([name, claim]) => ({ name, ...claim })).filter(
      (claim) => claim.expireAtMs > nowMs,
    );
    return { version: 1, documents, counters, reservations, claims };
  }

  private load(file: StoreFile): void {
    for (const { collection, id, value } of file.documents) {
      let documents = this.documents.get(collection);
      if (documents === undefined) {
        documents = new Map();
        this.documents.set(collection, documents);
      }
      documents.set(id, toJsonText(value));
    }
    const nowMs = Date.now();
    for (const { key, value, expireAtMs } of file.counters) {
      if (expireAtMs > nowMs) this.counters.set(key, { value, expireAtMs });
    }
    for (const { id, deadlineMs, payload } of file.reservations)
      this.reservations.set(id, { deadlineMs, payload });
    for (const { name, holder, expireAtMs } of file.claims) {
      if (expireAtMs > nowMs) this.claims.set(name, { holder, expireAtMs });
    }
  }
}

async function readStoreFile(filePath: string): Promise<StoreFile | undefined> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the gw store file ${filePath}: ${describeError(error)}`, { cause: error });
  }
  let parsed: StoreFile;
  try {
    parsed = storeFileSchema.parse(JSON.parse(text));
  } catch (error) {
    // Refusing to start beats starting empty and overwriting the file at the next save.
    const reason = error instanceof z.ZodError ? z.prettifyError(error) : describeError(error);
    throw new Error(
      `The gw store file ${filePath} is corrupt (${reason}); ` +
        'repair it or move it away to start with an empty store',
      { cause: error },
    );
  }
  return parsed;
}

/** Temp file + rename: a crash mid-write leaves the previous file whole. 0600: documents hold secrets. */
async function writeFileAtomically(filePath: string, text: string): Promise<void> {
  const temporaryPath = `${filePath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temporaryPath, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporaryPath, filePath);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
}

function toJsonText(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('A store document must be a JSON value');
  return text;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function reportAsWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)));
}
