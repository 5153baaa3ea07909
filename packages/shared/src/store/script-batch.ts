/**
 * Calls of one Lua script that arrive in the same turn of the event loop, run as one script call: admission and
 * settlement of concurrent requests cost Redis one EVALSHA and the client one command for the whole turn instead
 * of one each. Every call is still applied atomically and in arrival order (the batch runs them one after the
 * other inside one script, which Redis runs atomically), and each gets its own answer or error.
 */

/** How many calls one batch carries at most; more start the next batch at once. */
const BATCH_LIMIT = 64;

/**
 * Wraps a script written for one call (its KEYS and ARGV) so that one call of the result runs many:
 * ARGV[1] is the number of calls, then for each call its key count, its argument count and its arguments;
 * KEYS are every call's keys in order. The reply has one `{1, reply}` or `{0, error text}` per call: a call
 * that fails does not fail the others (what it wrote before failing stays written, as a failed script's would).
 */
export function batchedScript(single: string): string {
  return `local function one(KEYS, ARGV)
${single}
end
local out = {}
local keyAt, argAt = 0, 2
for call = 1, tonumber(ARGV[1]) do
  local keyCount, argCount = tonumber(ARGV[argAt]), tonumber(ARGV[argAt + 1])
  local keys, args = {}, {}
  for index = 1, keyCount do keys[index] = KEYS[keyAt + index] end
  for index = 1, argCount do args[index] = ARGV[argAt + 1 + index] end
  keyAt = keyAt + keyCount
  argAt = argAt + 2 + argCount
  local ok, reply = pcall(one, keys, args)
  if ok then
    out[call] = { 1, reply }
  else
    out[call] = { 0, type(reply) == 'table' and tostring(reply.err) or tostring(reply) }
  end
end
return out
`;
}

interface PendingCall {
  keys: string[];
  args: string[];
  resolve: (reply: unknown) => void;
  reject: (error: unknown) => void;
}

/** Runs the batched form of a script (`run(numberOfKeys, ...keys, ...argv)`, as ioredis's defineCommand makes it). */
export type BatchRunner = (numberOfKeys: number, ...keysAndArgv: string[]) => Promise<unknown>;

/**
 * The calls of some scripts gathered per turn of the event loop, each script's sent as one batched call per
 * group (a Redis Cluster runs a script on one slot: calls of different slots are different batches). The
 * scripts are flushed together, so their batches leave in one write (ioredis pipelines the commands of a tick).
 * A script may linger: its calls wait up to that many ms for the next flush instead of causing one (settles,
 * which no caller waits for, ride along with the next turn's admissions; every write wakes Redis, which costs
 * both processes more CPU than the command itself).
 */
export class ScriptBatches<Script extends string> {
  private readonly runners: Record<Script, BatchRunner>;
  private readonly linger: Partial<Record<Script, number>>;
  /** Pending calls by script and group. */
  private readonly pending = new Map<string, { script: Script; calls: PendingCall[] }>();
  private scheduled = false;
  private lingering: NodeJS.Timeout | undefined;

  constructor(
    runners: Record<Script, BatchRunner>,
    options: { linger?: Partial<Record<Script, number>> } = {},
  ) {
    this.runners = runners;
    this.linger = options.linger ?? {};
  }

  /** Runs one call of the script, batched with the turn's others of the same script and `group`. */
  call(script: Script, keys: string[], args: string[], group = ''): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const batch = `${script}\n${group}`;
      let pending = this.pending.get(batch);
      if (pending === undefined) {
        pending = { script, calls: [] };
        this.pending.set(batch, pending);
      }
      pending.calls.push({ keys, args, resolve, reject });
      const lingerMs = this.linger[script];
      if (pending.calls.length >= BATCH_LIMIT) {
        this.pending.delete(batch);
        this.send(script, pending.calls);
      } else if (lingerMs !== undefined) {
        this.lingering ??= setTimeout(() => this.flush(), lingerMs);
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends every pending call now (each script's and group's as one call). */
  flush(): void {
    this.scheduled = false;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const { script, calls } of batches) this.send(script, calls);
  }

  private send(script: Script, calls: PendingCall[]): void {
    const keys: string[] = [];
    const argv: string[] = [String(calls.length)];
    for (const call of calls) {
      keys.push(...call.keys);
      argv.push(String(call.keys.length), String(call.args.length), ...call.args);
    }
    this.runners[script](keys.length, ...keys, ...argv).then(
      (reply) => {
        for (const [index, call] of calls.entries()) {
          const answer = Array.isArray(reply) ? (reply[index] as unknown) : undefined;
          if (!Array.isArray(answer) || answer.length < 1) {
            call.reject(new Error(`malformed batched script reply for call ${index + 1} of ${calls.length}`));
          } else if (answer[0] === 1) call.resolve(answer[1] ?? null);
          else call.reject(new Error(String(answer[1])));
        }
      },
      (error: unknown) => {
        for (const call of calls) call.reject(error);
      },
    );
  }
}
