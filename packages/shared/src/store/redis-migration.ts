import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { Cluster, type Redis } from 'ioredis';
import { z } from 'zod';
import type { RedisConnection } from './redis-connection.ts';
import type { CounterName } from './store.ts';

// Governance state of the one-`{gov}`-tag layout (releases before counters were spread by owner) moved to the
// layout of redis-store.ts when a process that owns governance state starts against a Redis that has it
// (docs/governance.md "Upgrading a cluster").
//
// Old layout: `<prefix>{gov}counter:<counter key>` (integers, with the expiry of their period), the journal
// `<prefix>{gov}reservations` (id → '<alternative>\n<payload>') with `<prefix>{gov}reservation-deadlines` (a zset
// of id by deadline), and settled marks `<prefix>{gov}settled:<id>` (they expire after SETTLED_MARK_MS).
//
// Why a move counts each amount once, whatever is killed when, however many passes run (a Redis Cluster runs a
// script on one slot, and the old and new keys are in different slots, so no one step can do both):
// 1. detach (one script on the `{gov}` slot): the old counter's value and expiry, or the old reservation, go
//    into an outbox hash on that slot (`{gov}migration`, under a fresh nonce) and leave the old layout, at once.
//    What a pass reads is what it moves: an old-release process that writes the counter after it makes a new
//    key (detached later as a new entry); one that settles the reservation after it finds nothing to settle.
// 2. attach (one script on each destination slot): the entry is added to an owner's counter, or recorded in
//    its shard of the journal, together with a mark of the entry's nonce on that slot; a mark already there
//    means it was done, so an entry attached again (a pass killed before step 3, two passes at once) adds
//    nothing. A counter's mark lives until its period ends, after which an attach finds the period over and
//    adds nothing anyway; a reservation's lives RESERVATION_MARK_MS.
// 3. the entry leaves the outbox. A pass starts by finishing the entries a killed pass left there.
// A process killed between 1 and 2 leaves its entries in the outbox (counted nowhere until the next pass, never
// lost); between 2 and 3 the marks make the next pass add nothing.
//
// The journal's shards (`{res:<n>}`) went from 16 to 64 later (an even share of them on each master of a Redis
// Cluster: 16 tags fall 5/4/7 on three masters' default slots, 64 fall 22/21/21). A reservation whose id hashes to
// another shard now is moved there the same way (`reshardJournal`): detached into an outbox on its old shard's
// slot, attached to its new shard with a mark, then taken out of the outbox. Settled marks stay where they are:
// they live 5 minutes, and guard only against an admission of the same request coming again that late.

/** Where the old layout's state goes: decided by governance, which knows whose each counter is. */
export interface OneTagMigrationPlan {
  /**
   * The owners (`key:<id>`, `team:<id>`…) whose counter of the same key gets an old counter's value (each
   * gets it all: a budget id that two owners share was one counter then). None: it is left where it is, as
   * the counter of the default owner it now names (a counter of a resource deleted since).
   */
  ownersOf(counterKey: string): readonly string[];
  /** A reservation's payload as the new release settles it (each counter naming its owner). */
  payloadOf(payload: string): string;
}

/** What a migration did. */
export interface OneTagMigrationResult {
  /** False when there was nothing to do: the layout was moved before (by this or another process). */
  ran: boolean;
  /** Old counters moved. */
  counters: number;
  /** Owners' counters added to (one per owner of each moved counter). */
  ownerCounters: number;
  /** Old counters left where they are: no owner found, or not an integer. */
  left: number;
  /** Open reservations moved to the new journal. */
  reservations: number;
  /** Settled marks copied to the new journal (each with the rest of its time). */
  settledMarks: number;
  /** Entries of an interrupted migration finished. */
  resumed: number;
  /** Open reservations moved to another shard of the journal when it went from 16 shards to 64. */
  resharded: number;
}

/** What the migration needs of the RedisStore: its connection and the new layout's key names. */
export interface OneTagLayoutTarget {
  connection: RedisConnection;
  prefix: string;
  /** The key of a counter in the new layout. */
  counterKey(counter: CounterName): string;
  /** A reservation's keys in the new journal: its shard's reservations and deadlines, and its settled mark. */
  journalKeys(id: string): string[];
  claim(name: string, holder: string, ttlMs: number): Promise<string>;
}

/** How long the claim of a migration holds (a longer migration may be run twice: safe). */
const CLAIM_MS = 60_000;
/**
 * Who claims the migration: this process (a pass that failed here is tried again at once by the next call; a
 * process started after one killed mid-migration waits for its claim to lapse).
 */
const HOLDER = randomUUID();
/** How often a process that waits for another's migration looks again. */
const WAIT_INTERVAL_MS = 250;
/** How long the mark of a reservation's move lives: far past any pass that could attach its entry again. */
const RESERVATION_MARK_MS = 30 * 24 * 3_600_000;
/** Keys a SCAN step looks at (and so at most the keys moved at once). */
const SCAN_COUNT = 500;

const SCRIPT_FILES = {
  detachCounter: new URL('./lua/detach-counter-2.lua', import.meta.url),
  attachCounter: new URL('./lua/attach-counter-2.lua', import.meta.url),
  detachReservation: new URL('./lua/detach-reservation-3.lua', import.meta.url),
  attachReservation: new URL('./lua/attach-reservation-4.lua', import.meta.url),
} as const;

type ScriptName = keyof typeof SCRIPT_FILES;
type Scripts = Record<ScriptName, { text: string; sha: string }>;

const integerText = z.string().regex(/^-?\d+$/);
const entrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('counter'),
    key: z.string(),
    owners: z.array(z.string().min(1)).min(1),
    value: integerText,
    expireAt: integerText,
  }),
  z.object({ kind: z.literal('reservation'), id: z.string(), stored: z.string(), deadline: z.string() }),
]);
type Entry = z.infer<typeof entrySchema>;

/** A detach script's reply: the entry made, or why there is none. */
const detachReplySchema = z.union([
  z.tuple([z.literal(1), z.string()]),
  z.tuple([z.literal(0), z.enum(['gone', 'not a count', 'changed'])]),
]);

/**
 * Moves the old layout's state once per Redis, however many processes start at once: done when the marker is
 * there; otherwise one process claims it and moves it while the others wait for the marker (or for the claim to
 * lapse, and then move it too: a move run twice counts each amount once).
 */
export async function migrateOneTagLayout(
  target: OneTagLayoutTarget,
  plan: OneTagMigrationPlan,
): Promise<OneTagMigrationResult> {
  const result = await oncePerRedis(target, 'gov-tag', async () =>
    (await LayoutMove.open(target, plan, '{gov}')).pass(),
  );
  return result ?? { ...noCounts(), ran: false };
}

/** What the journal's move to more shards did. */
export interface JournalReshardResult {
  /** False when there was nothing to do: the journal was resharded before (by this or another process). */
  ran: boolean;
  /** Open reservations moved to the shard their id hashes to now. */
  reservations: number;
  /** Entries of an interrupted move finished. */
  resumed: number;
}

/**
 * Moves the open reservations of the journal's first `oldShards` shards whose id hashes to another shard now
 * (`shardOf`), once per Redis however many processes start at once (see the top of this file).
 */
export async function reshardJournal(
  target: OneTagLayoutTarget,
  journal: { oldShards: number; newShards: number; shardOf(id: string): number },
): Promise<JournalReshardResult> {
  const result = await oncePerRedis(target, `journal-shards-${journal.newShards}`, async () => {
    const counts = { ...noCounts(), ran: true };
    for (let shard = 0; shard < journal.oldShards; shard++) {
      const move = await LayoutMove.open(target, KEEP_PAYLOADS, `{res:${shard}}`);
      await move.finishOutbox(counts);
      await move.moveReservations(counts, (id) => journal.shardOf(id) !== shard);
    }
    return counts;
  });
  return {
    ran: result !== undefined,
    reservations: result?.reservations ?? 0,
    resumed: result?.resumed ?? 0,
  };
}

/** A journal's reservations moved as they are (their payloads already name their counters' owners). */
const KEEP_PAYLOADS: OneTagMigrationPlan = { ownersOf: () => [], payloadOf: (payload) => payload };

/**
 * Runs `work` once per Redis: nothing when its marker (`<prefix>migrated:<name>`) is there; otherwise one process
 * claims it and runs it while the others wait for the marker (or for the claim to lapse, and then run it too: a
 * move run twice counts each amount once). Undefined when another process did it.
 */
async function oncePerRedis<Result>(
  target: OneTagLayoutTarget,
  name: string,
  work: () => Promise<Result>,
): Promise<Result | undefined> {
  const marker = `${target.prefix}migrated:${name}`;
  while ((await target.connection.exists(marker)) === 0) {
    if ((await target.claim(`migration:${name}`, HOLDER, CLAIM_MS)) !== HOLDER) {
      await delay(WAIT_INTERVAL_MS);
      continue;
    }
    const result = await work();
    await target.connection.set(marker, new Date().toISOString());
    return result;
  }
  return undefined;
}

/**
 * One pass of a move out of the keys of one hash tag (`{gov}`, or a shard of the journal); any number may run, one
 * after the other or at once (see the top of this file).
 */
class LayoutMove {
  private readonly target: OneTagLayoutTarget;
  private readonly scripts: Scripts;
  private readonly plan: OneTagMigrationPlan;
  private readonly old: { tag: string; reservations: string; deadlines: string; outbox: string };

  private constructor(target: OneTagLayoutTarget, scripts: Scripts, plan: OneTagMigrationPlan, tag: string) {
    this.target = target;
    this.scripts = scripts;
    this.plan = plan;
    const prefixed = `${target.prefix}${tag}`;
    this.old = {
      tag: prefixed,
      reservations: `${prefixed}reservations`,
      deadlines: `${prefixed}reservation-deadlines`,
      outbox: `${prefixed}migration`,
    };
  }

  /** A pass over the target's Redis out of the keys of `tag`, its scripts read. */
  static async open(target: OneTagLayoutTarget, plan: OneTagMigrationPlan, tag: string): Promise<LayoutMove> {
    return new LayoutMove(target, await readScripts(), plan, tag);
  }

  /** Finishes what an interrupted pass left, then moves every counter, reservation and settled mark. */
  async pass(): Promise<OneTagMigrationResult> {
    const counts = { ...noCounts(), ran: true };
    await this.finishOutbox(counts);
    await this.moveCountersAndMarks(counts);
    await this.moveReservations(counts);
    return counts;
  }

  /** Takes an old counter out of the old layout into the outbox; undefined when it stays (counted in `left`). */
  private async detachCounter(
    oldKey: string,
    counts: OneTagMigrationResult,
  ): Promise<DetachedEntry | undefined> {
    const key = oldKey.slice(`${this.old.tag}counter:`.length);
    const owners = this.plan.ownersOf(key);
    if (owners.length === 0) {
      counts.left++;
      return undefined;
    }
    const nonce = randomUUID();
    const reply = detachReplySchema.parse(
      await this.script(
        'detachCounter',
        [oldKey, this.old.outbox],
        [nonce, JSON.stringify({ kind: 'counter', key, owners })],
      ),
    );
    if (reply[0] === 0) {
      if (reply[1] === 'not a count') counts.left++;
      return undefined;
    }
    return { nonce, entry: parseEntry(reply[1]) };
  }

  /** Takes an open reservation out of the old journal into the outbox; undefined when it is no longer there. */
  private async detachReservation(id: string, stored: string): Promise<DetachedEntry | undefined> {
    const newline = stored.indexOf('\n');
    const rewritten = `${stored.slice(0, newline + 1)}${this.plan.payloadOf(stored.slice(newline + 1))}`;
    const nonce = randomUUID();
    const reply = detachReplySchema.parse(
      await this.script(
        'detachReservation',
        [this.old.reservations, this.old.deadlines, this.old.outbox],
        [id, stored, nonce, JSON.stringify({ kind: 'reservation', id, stored: rewritten })],
      ),
    );
    return reply[0] === 1 ? { nonce, entry: parseEntry(reply[1]) } : undefined;
  }

  /** Adds an entry to its destination once (each owner's counter, or the journal); what was added now. */
  private async attach({ nonce, entry }: DetachedEntry): Promise<number> {
    if (entry.kind === 'counter') {
      const added = await allSettledOrThrow(
        entry.owners.map(async (owner) => {
          const counter = this.target.counterKey({ key: entry.key, owner });
          const mark = slotMate(counter, `migrated:${nonce}`);
          return Number(await this.script('attachCounter', [counter, mark], [entry.value, entry.expireAt]));
        }),
      );
      return added.reduce((sum, one) => sum + one, 0);
    }
    const [reservations, deadlines, settled] = this.target.journalKeys(entry.id);
    const mark = slotMate(reservations!, `migrated:${nonce}`);
    return Number(
      await this.script(
        'attachReservation',
        [reservations!, deadlines!, settled!, mark],
        [entry.id, entry.deadline, entry.stored, String(RESERVATION_MARK_MS)],
      ),
    );
  }

  /** Removes an attached entry from the outbox. */
  private async finish({ nonce }: DetachedEntry): Promise<void> {
    await this.target.connection.hdel(this.old.outbox, nonce);
  }

  /** Runs a script by its hash, sent whole the first time a server does not know it. */
  private async script(name: ScriptName, keys: string[], args: string[]): Promise<unknown> {
    const { connection } = this.target;
    const { text, sha } = this.scripts[name];
    try {
      return await connection.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return connection.eval(text, keys.length, ...keys, ...args);
    }
  }

  private async move(detached: DetachedEntry, counts: OneTagMigrationResult): Promise<void> {
    const added = await this.attach(detached);
    await this.finish(detached);
    if (detached.entry.kind === 'counter') {
      counts.counters++;
      counts.ownerCounters += added;
    } else if (added === 1) {
      counts.reservations++;
    }
  }

  async finishOutbox(counts: OneTagMigrationResult): Promise<void> {
    let cursor = '0';
    do {
      const [next, fields] = await this.target.connection.hscan(this.old.outbox, cursor, 'COUNT', SCAN_COUNT);
      cursor = next;
      await allSettledOrThrow(
        pairs(fields).map(async ([nonce, text]) => {
          const detached = { nonce, entry: parseEntry(text) };
          await this.attach(detached);
          await this.finish(detached);
          counts.resumed++;
        }),
      );
    } while (cursor !== '0');
  }

  /** Every old counter and settled mark, on every master (a Redis Cluster's `{gov}` slot is on one of them). */
  private async moveCountersAndMarks(counts: OneTagMigrationResult): Promise<void> {
    const counterPrefix = `${this.old.tag}counter:`;
    const settledPrefix = `${this.old.tag}settled:`;
    for (const server of masters(this.target.connection)) {
      let cursor = '0';
      do {
        const [next, keys] = await server.scan(
          cursor,
          'MATCH',
          `${escapeGlob(this.old.tag)}*`,
          'COUNT',
          SCAN_COUNT,
        );
        cursor = next;
        await allSettledOrThrow(
          keys.map(async (key) => {
            if (key.startsWith(counterPrefix)) {
              const detached = await this.detachCounter(key, counts);
              if (detached) await this.move(detached, counts);
            } else if (key.startsWith(settledPrefix)) {
              if (await this.copySettledMark(key)) counts.settledMarks++;
            }
          }),
        );
      } while (cursor !== '0');
    }
  }

  /**
   * A settled mark, copied with its expiry to the new journal (a late admission of the request then counts
   * nothing there either). The old one is left to expire: `{gov}settled:<id>` is also the name of the default
   * owner's settle mark now.
   */
  private async copySettledMark(key: string): Promise<boolean> {
    const id = key.slice(`${this.old.tag}settled:`.length);
    const expireAt = await this.target.connection.pexpiretime(key);
    if (expireAt <= 0) return false;
    const [, , settled] = this.target.journalKeys(id);
    await this.target.connection.set(settled!, '1', 'PXAT', expireAt);
    return true;
  }

  /** Moves every open reservation of the old journal (those `moves` names, when given). */
  async moveReservations(counts: OneTagMigrationResult, moves?: (id: string) => boolean): Promise<void> {
    let cursor = '0';
    do {
      const [next, fields] = await this.target.connection.hscan(
        this.old.reservations,
        cursor,
        'COUNT',
        SCAN_COUNT,
      );
      cursor = next;
      await allSettledOrThrow(
        pairs(fields).map(async ([id, stored]) => {
          if (moves && !moves(id)) return;
          const detached = await this.detachReservation(id, stored);
          if (detached) await this.move(detached, counts);
        }),
      );
    } while (cursor !== '0');
  }
}

/** An entry in the outbox, under its nonce. */
interface DetachedEntry {
  nonce: string;
  entry: Entry;
}

/** The migration's Lua scripts, read from lua/, with their hashes (EVALSHA). */
async function readScripts(): Promise<Scripts> {
  const entries = await Promise.all(
    Object.entries(SCRIPT_FILES).map(async ([name, file]) => {
      const text = await readFile(file, 'utf8');
      return [name, { text, sha: createHash('sha1').update(text).digest('hex') }] as const;
    }),
  );
  return Object.fromEntries(entries) as Scripts;
}

function noCounts(): Omit<OneTagMigrationResult, 'ran'> {
  return {
    counters: 0,
    ownerCounters: 0,
    left: 0,
    reservations: 0,
    settledMarks: 0,
    resumed: 0,
    resharded: 0,
  };
}

function parseEntry(text: string): Entry {
  return entrySchema.parse(JSON.parse(text));
}

/**
 * A key in the same slot as `key`: its hash tag (the first `{…}`, which Redis hashes instead of the whole key)
 * and `name` after it.
 */
function slotMate(key: string, name: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  if (open === -1 || close <= open + 1) throw new Error(`${key} has no hash tag`);
  return `${key.slice(0, close + 1)}${name}`;
}

/** The servers whose keys a SCAN must look at: every master of a Cluster, else the one server. */
function masters(connection: RedisConnection): Redis[] {
  return connection instanceof Cluster ? connection.nodes('master') : [connection];
}

/** HSCAN's flat reply as field/value pairs. */
function pairs(flat: string[]): Array<[string, string]> {
  const result: Array<[string, string]> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) result.push([flat[index]!, flat[index + 1]!]);
  return result;
}

/** Waits for every one (none left running behind a failure), then throws the first failure. */
async function allSettledOrThrow<Value>(work: Array<Promise<Value>>): Promise<Value[]> {
  const outcomes = await Promise.allSettled(work);
  return outcomes.map((outcome) => {
    if (outcome.status === 'rejected') throw outcome.reason;
    return outcome.value;
  });
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
