import { describe, expect, it } from 'vitest';
import { ScriptBatches } from './script-batch.ts';

/**
 * A runner that answers each call of a batch with its first argument doubled plus its key count, or an error
 * for 'fail'; it notes its name in `sent` when it runs.
 */
function recordingRunner(name = 'one', sent: string[] = []) {
  const batches: string[][] = [];
  const run = async (numberOfKeys: number, ...keysAndArgv: string[]) => {
    sent.push(name);
    batches.push(keysAndArgv);
    const argv = keysAndArgv.slice(numberOfKeys);
    const replies: unknown[] = [];
    let at = 1;
    for (let call = 0; call < Number(argv[0]); call++) {
      const [keyCount, argCount] = [Number(argv[at]), Number(argv[at + 1])];
      const args = argv.slice(at + 2, at + 2 + argCount);
      replies.push(args[0] === 'fail' ? [0, 'ERR no'] : [1, Number(args[0]) * 2 + keyCount]);
      at += 2 + argCount;
    }
    return replies;
  };
  return { batches, run };
}

describe('ScriptBatches', () => {
  it('sends the calls of one turn as one batch, keys first, and answers each its own reply', async () => {
    const { batches, run } = recordingRunner();
    const batch = new ScriptBatches({ one: run });
    const answers = await Promise.all([
      batch.call('one', ['k1'], ['1']),
      batch.call('one', ['k2', 'k3'], ['5', 'x']),
      batch.call('one', [], ['7']),
    ]);
    expect(answers).toEqual([3, 12, 14]);
    expect(batches).toEqual([['k1', 'k2', 'k3', '3', '1', '1', '1', '2', '2', '5', 'x', '0', '1', '7']]);
  });

  it('sends the calls of different groups (slots of a Redis Cluster) as different batches of one turn', async () => {
    const { batches, run } = recordingRunner();
    const batch = new ScriptBatches({ one: run });
    const answers = await Promise.all([
      batch.call('one', ['{a}1'], ['1'], 'a'),
      batch.call('one', ['{b}1'], ['2'], 'b'),
      batch.call('one', ['{a}2'], ['3'], 'a'),
    ]);
    expect(answers).toEqual([3, 5, 7]);
    expect(batches).toEqual([
      ['{a}1', '{a}2', '2', '1', '1', '1', '1', '1', '3'],
      ['{b}1', '1', '1', '1', '2'],
    ]);
  });

  it('fails only the call whose script failed', async () => {
    const batch = new ScriptBatches({ one: recordingRunner().run });
    const results = await Promise.allSettled([
      batch.call('one', [], ['1']),
      batch.call('one', [], ['fail']),
      batch.call('one', [], ['2']),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('ERR no');
  });

  it('fails every call of a batch whose command failed, and keeps working after', async () => {
    let broken = true;
    const { run } = recordingRunner();
    const batch = new ScriptBatches({
      one: (...call) => (broken ? Promise.reject(new Error('timed out')) : run(...call)),
    });
    const failed = await Promise.allSettled([batch.call('one', [], ['1']), batch.call('one', [], ['2'])]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    broken = false;
    expect(await batch.call('one', [], ['4'])).toBe(8);
  });

  it('splits a burst into batches of at most 64 calls, in arrival order', async () => {
    const { batches, run } = recordingRunner();
    const batch = new ScriptBatches({ one: run });
    const answers = await Promise.all(
      Array.from({ length: 150 }, (_, index) => batch.call('one', [], [String(index)])),
    );
    expect(answers).toEqual(Array.from({ length: 150 }, (_, index) => index * 2));
    expect(batches.map((sent) => Number(sent[0]))).toEqual([64, 64, 22]);
  });

  it('flushes the batches of every script of a turn together, each script its own call', async () => {
    const sent: string[] = [];
    const first = recordingRunner('first', sent);
    const second = recordingRunner('second', sent);
    const batch = new ScriptBatches({ first: first.run, second: second.run });
    const answers = await Promise.all([
      batch.call('first', [], ['1']),
      batch.call('second', [], ['2']),
      batch.call('first', [], ['3']),
    ]);
    expect(answers).toEqual([2, 4, 6]);
    expect(sent).toEqual(['first', 'second']);
    expect(first.batches).toEqual([['2', '0', '1', '1', '0', '1', '3']]);
  });

  it('holds a lingering script until the next flush, or its linger at most', async () => {
    const sent: string[] = [];
    const batch = new ScriptBatches(
      { urgent: recordingRunner('urgent', sent).run, patient: recordingRunner('patient', sent).run },
      { linger: { patient: 50 } },
    );
    const riding = batch.call('patient', [], ['1']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    // The next urgent call's flush takes the lingering call along, in the same turn.
    expect(await Promise.all([batch.call('urgent', [], ['2']), riding])).toEqual([4, 2]);
    expect(sent).toEqual(['patient', 'urgent']);
    // Alone, a lingering call goes when its linger is over.
    const started = performance.now();
    expect(await batch.call('patient', [], ['3'])).toBe(6);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(sent).toEqual(['patient', 'urgent', 'patient']);
  });

  it('rejects a call whose reply is missing from the batch', async () => {
    const batch = new ScriptBatches({ one: async () => [[1, 'only one']] });
    const results = await Promise.allSettled([batch.call('one', [], ['a']), batch.call('one', [], ['b'])]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'only one' });
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(
      /malformed batched script reply for call 2 of 2/,
    );
  });
});
