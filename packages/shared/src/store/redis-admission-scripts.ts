import { readFile } from 'node:fs/promises';
import { counterTtlMs, SETTLED_MARK_MS } from './admission.ts';
import type { RedisConnection } from './redis-connection.ts';
import { batchedScript, ScriptBatches } from './script-batch.ts';
import type { AdmitResult, CounterAdjustment, CounterCheck } from './store.ts';

// The Lua scripts of admission and settlement (lua/) seen from the RedisStore: loaded, defined as commands,
// batched per turn of the event loop (and per slot), their ARGV written and their replies read. Their KEYS (each
// owner's counters in the owner's slot, the journal of reservations in its shards) are the store's:
// redis-store.ts.

const SCRIPT_FILES = {
  take: new URL('./lua/take-counters-n.lua', import.meta.url),
  add: new URL('./lua/add-counters-n.lua', import.meta.url),
  /** add-counters-n again, for what a refused admission gives back: sent with its turn, never lingering. */
  giveBack: new URL('./lua/add-counters-n.lua', import.meta.url),
  release: new URL('./lua/release-counters-n.lua', import.meta.url),
  takeSlice: new URL('./lua/take-slice-2.lua', import.meta.url),
  returnSlice: new URL('./lua/return-slice-2.lua', import.meta.url),
  record: new URL('./lua/record-reservation-3.lua', import.meta.url),
  settle: new URL('./lua/settle-reservation-3.lua', import.meta.url),
  abandon: new URL('./lua/abandon-reservation-2.lua', import.meta.url),
} as const;

type ScriptName = keyof typeof SCRIPT_FILES;

/**
 * How long a script may wait to share a write to Redis with the next admissions (they are sent at the end of
 * their turn of the event loop): settles, and what a settle adds to counters, are off every request's critical
 * path.
 */
const SETTLE_LINGER_MS = 2;

/** The commands the scripts are defined as on the connection (never auto-pipelined on a Cluster). */
export const SCRIPT_COMMANDS = [
  'takeCounters',
  'addCounters',
  'giveBackCounters',
  'releaseCounters',
  'takeSliceOfCounter',
  'returnSliceOfCounter',
  'recordReservation',
  'settleReservation',
  'abandonReservation',
] as const;

const COMMAND_OF: Record<ScriptName, (typeof SCRIPT_COMMANDS)[number]> = {
  take: 'takeCounters',
  add: 'addCounters',
  giveBack: 'giveBackCounters',
  release: 'releaseCounters',
  takeSlice: 'takeSliceOfCounter',
  returnSlice: 'returnSliceOfCounter',
  record: 'recordReservation',
  settle: 'settleReservation',
  abandon: 'abandonReservation',
};

/** The main connection with the commands that defineCommand adds for the Lua scripts of lua/ (batched). */
type ScriptedRedis = RedisConnection &
  Record<
    (typeof SCRIPT_COMMANDS)[number],
    (numberOfKeys: number, ...keysAndArgv: string[]) => Promise<unknown>
  >;

export type AdmissionScripts = ScriptBatches<ScriptName>;

export type AdmissionLua = Record<ScriptName, string>;

/** The scripts' text, read before connecting (a missing file fails the start, not the first request). */
export async function readAdmissionScripts(): Promise<AdmissionLua> {
  const names = Object.keys(SCRIPT_FILES) as ScriptName[];
  const texts = await Promise.all(names.map((name) => readFile(SCRIPT_FILES[name], 'utf8')));
  return Object.fromEntries(names.map((name, index) => [name, texts[index]!])) as AdmissionLua;
}

/**
 * Defines the batched scripts on the connection. The calls of one turn of the event loop: each script's (per
 * group: a slot on a Redis Cluster) sent as one script call, all in one write.
 */
export function admissionScripts(connection: RedisConnection, lua: AdmissionLua): AdmissionScripts {
  const scripted = connection as ScriptedRedis;
  const runners = {} as Record<
    ScriptName,
    (numberOfKeys: number, ...keysAndArgv: string[]) => Promise<unknown>
  >;
  for (const name of Object.keys(SCRIPT_FILES) as ScriptName[]) {
    const command = COMMAND_OF[name];
    scripted.defineCommand(command, { lua: batchedScript(lua[name]) });
    runners[name] = (...call) => scripted[command](...call);
  }
  return new ScriptBatches(runners, { linger: { settle: SETTLE_LINGER_MS, add: SETTLE_LINGER_MS } });
}

/**
 * How long the mark of an owner's step lives (take-counters-n.lua): long past the time between a step and its
 * release, which is sent after it on the same connection and runs after it, however long Redis stalls.
 */
const TAKEN_MARK_MS = 60_000;

/**
 * take-counters-n.lua's ARGV: the checks of every group (the owner's required, then each alternative; JSON), the
 * reservation id and how long the step's mark lives.
 */
export function takeArguments(groups: CounterCheck[][], reservationId: string): string[] {
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
  // cjson turns an empty Lua table into {}, so groups always hold arrays here, never empty objects.
  return [JSON.stringify(spec), reservationId, String(TAKEN_MARK_MS)];
}

/**
 * release-counters-n.lua's ARGV: each counter's expiry (JSON) and how long the released mark lives; `forget`: the
 * mark is deleted instead (a step that answered, of an admission that was refused: its request may be admitted
 * again).
 */
export function releaseArguments(checks: CounterCheck[], options: { forget: boolean }): string[] {
  return [
    JSON.stringify(
      checks.map((check) => ({ expireAt: check.expireAtMs, ttl: counterTtlMs(check.expireAtMs) })),
    ),
    options.forget ? '0' : String(TAKEN_MARK_MS),
  ];
}

/**
 * take-counters-n.lua's reply: allowed, failed group, failed index, failed current, passing (JSON). A refusal
 * names its failing check, but for group -3: the reservation's step was taken (or released) before, by another
 * admission of the same id (`taken-before`), which is no refusal at all.
 */
export function takeResult(reply: unknown): AdmitResult | 'taken-before' {
  if (Array.isArray(reply) && reply.length === 5 && typeof reply[4] === 'string') {
    const [allowed, group, index, current, passingText] = reply as unknown[];
    const passing: unknown = JSON.parse(passingText as string);
    if (
      (allowed === 0 || allowed === 1) &&
      typeof group === 'number' &&
      typeof index === 'number' &&
      typeof current === 'number' &&
      Array.isArray(passing) &&
      passing.every((entry) => typeof entry === 'number')
    ) {
      if (allowed === 1) return { allowed: true, passing };
      if (group === -3) return 'taken-before';
      if (group >= -1) return { allowed: false, passing, failed: { group, index, current } };
    }
  }
  throw new Error(`malformed admission reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);
}

/**
 * add-counters-n.lua's ARGV: the adjustments of its KEYS, in order (JSON), and the reservation they settle ('':
 * none) with how long its mark lives.
 */
export function addArguments(adjustments: CounterAdjustment[], reservationId: string): string[] {
  return [
    JSON.stringify(
      adjustments.map((adjustment) => ({
        delta: adjustment.delta,
        expireAt: adjustment.expireAtMs,
        ttl: counterTtlMs(adjustment.expireAtMs),
      })),
    ),
    reservationId,
    String(SETTLED_MARK_MS),
  ];
}

/** record-reservation-3.lua's reply: recorded, or the alternative a duplicate's first admission chose. */
export function recordResult(reply: unknown): { recorded: true } | { recorded: false; alternative: number } {
  if (Array.isArray(reply) && reply.length === 2 && typeof reply[1] === 'number') {
    if (reply[0] === 1) return { recorded: true };
    if (reply[0] === 0) return { recorded: false, alternative: reply[1] };
  }
  throw new Error(`malformed reservation reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);
}

/**
 * abandon-reservation-2.lua's reply: closed by this call, or the alternative the id was admitted with before
 * (-1: it was settled already), as record-reservation-3.lua answers a duplicate.
 */
export function abandonResult(
  reply: unknown,
): { abandoned: true } | { abandoned: false; alternative: number } {
  const recorded = recordResult(reply);
  return recorded.recorded ? { abandoned: true } : { abandoned: false, alternative: recorded.alternative };
}

/** settle-reservation-3.lua's ARGV: the reservation's id and how long its mark lives. */
export function settleArguments(id: string): string[] {
  return [id, String(SETTLED_MARK_MS)];
}

/** take-slice-2.lua's reply. */
export function sliceResult(reply: unknown): {
  taken: number;
  armed: number;
  granted: boolean;
  fresh: boolean;
} {
  if (Array.isArray(reply) && reply.length === 4 && reply.every((value) => typeof value === 'number')) {
    const [taken, armed, granted, fresh] = reply as number[];
    return { taken: taken!, armed: armed!, granted: granted === 1, fresh: fresh === 1 };
  }
  throw new Error(`malformed slice reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);
}
