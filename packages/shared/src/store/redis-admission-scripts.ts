import { readFile } from 'node:fs/promises';
import { counterTtlMs, SETTLED_MARK_MS } from './admission.ts';
import type { RedisConnection } from './redis-connection.ts';
import { batchedScript, ScriptBatches } from './script-batch.ts';
import type { AdmitRequest, AdmitResult, CounterCheck, SettleReservationRequest } from './store.ts';

// The Lua scripts of admission and settlement (lua/) seen from the RedisStore: loaded, defined as commands,
// batched per turn of the event loop, their ARGV written and their replies read. Their KEYS (in the `{gov}`
// slot) are the store's: redis-store.ts.

const ADMIT_COUNTERS_LUA = new URL('./lua/admit-counters-n.lua', import.meta.url);
const SETTLE_RESERVATION_LUA = new URL('./lua/settle-reservation-4.lua', import.meta.url);

/**
 * How long a settle may wait to share a write to Redis with the next admissions (they are sent at the end of
 * their turn of the event loop); settles are off every request's critical path.
 */
const SETTLE_LINGER_MS = 2;

/** The main connection with the commands that defineCommand adds for the Lua scripts of lua/ (batched). */
type ScriptedRedis = RedisConnection & {
  admitCounters(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
  settleReservation(numberOfKeys: number, ...keysAndArgv: string[]): Promise<unknown>;
};

export type AdmissionScripts = ScriptBatches<'admit' | 'settle'>;

/** The commands the scripts are defined as on the connection (never auto-pipelined on a Cluster). */
export const SCRIPT_COMMANDS = ['admitCounters', 'settleReservation'] as const;

/** The scripts' text, read before connecting (a missing file fails the start, not the first request). */
export async function readAdmissionScripts(): Promise<{ admit: string; settle: string }> {
  const [admit, settle] = await Promise.all(
    [ADMIT_COUNTERS_LUA, SETTLE_RESERVATION_LUA].map((file) => readFile(file, 'utf8')),
  );
  return { admit: admit!, settle: settle! };
}

/**
 * Defines the batched scripts on the connection. Admissions and settles of one turn of the event loop: each
 * kind sent as one script call, both in one write.
 */
export function admissionScripts(
  connection: RedisConnection,
  lua: { admit: string; settle: string },
): AdmissionScripts {
  const scripted = connection as ScriptedRedis;
  const [admit, settle] = SCRIPT_COMMANDS;
  scripted.defineCommand(admit, { lua: batchedScript(lua.admit) });
  scripted.defineCommand(settle, { lua: batchedScript(lua.settle) });
  return new ScriptBatches(
    {
      admit: (...call) => scripted.admitCounters(...call),
      settle: (...call) => scripted.settleReservation(...call),
    },
    { linger: { settle: SETTLE_LINGER_MS } },
  );
}

/**
 * admit-counters-n.lua's ARGV: the checks of every group (`required`, then each alternative; JSON), the
 * reservation's id, deadline and payload.
 */
export function admitArguments(groups: CounterCheck[][], reservation: AdmitRequest['reservation']): string[] {
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
  return [
    // cjson turns an empty Lua table into {}, so groups always hold arrays here, never empty objects.
    JSON.stringify(spec),
    reservation?.id ?? '',
    String(reservation?.deadlineMs ?? 0),
    reservation?.payload ?? '',
  ];
}

/** admit-counters-n.lua's reply: allowed, failed group, failed index, failed current, passing (JSON), duplicate. */
export function admitResult(reply: unknown): AdmitResult {
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
      return allowed === 1
        ? { allowed: true, passing, ...(duplicate === 1 && { duplicate: true }) }
        : {
            allowed: false,
            passing,
            ...(group === -2 ? {} : { failed: { group, index, current } }),
          };
    }
  }
  throw new Error(`malformed admission reply from Redis: ${JSON.stringify(reply)?.slice(0, 200)}`);
}

/** settle-reservation-4.lua's ARGV: the reservation's id, its adjustments (JSON) and how long its mark lives. */
export function settleArguments(request: SettleReservationRequest): string[] {
  const adjustments = request.adjustments.map((adjustment) => ({
    delta: adjustment.delta,
    expireAt: adjustment.expireAtMs,
    ttl: counterTtlMs(adjustment.expireAtMs),
  }));
  return [request.id, adjustments.length === 0 ? '[]' : JSON.stringify(adjustments), String(SETTLED_MARK_MS)];
}
