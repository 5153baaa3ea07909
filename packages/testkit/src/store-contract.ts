import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../shared/src/store/index.ts';
import { scaled } from './time-scale.ts';

export interface StoreContractOptions {
  /** Names the implementation in the test titles. */
  name: string;
  /**
   * Opens a store over the state shared by the whole run (one Redis prefix, one data directory): a second
   * call gives a sibling that sees what the first wrote (for an embedded store, once the first is closed).
   */
  create: () => Promise<Store>;
  /** Case name → why this implementation does not run it. */
  skip?: Record<string, string>;
}

/** How long a message or an expiry may take to show: 2 s on an idle machine, stretched by the time scale. */
const DELIVERY_TIMEOUT_MS = scaled(2_000);

/**
 * The behaviour every Store implementation owes its callers. Cases use fresh collection, key and channel
 * names, since the stores of one run share their state.
 */
export function runStoreContract(options: StoreContractOptions): void {
  const skip = options.skip ?? {};

  describe(`Store contract: ${options.name}`, () => {
    const opened: Store[] = [];
    const open = async (): Promise<Store> => {
      const store = await options.create();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    const caseNames = new Set<string>();
    const contractCase = (name: string, body: () => Promise<void>): void => {
      caseNames.add(name);
      const reason = skip[name];
      if (reason === undefined) it(name, body);
      else it.skip(`${name} (skipped: ${reason})`, body);
    };

    contractCase('get answers a stored document, and undefined when there is none', async () => {
      const store = await open();
      const collection = unique('documents');
      await store.put(collection, 'a', { name: 'first' });
      expect(await store.get(collection, 'a')).toEqual({ name: 'first' });
      expect(await store.get(collection, 'missing')).toBeUndefined();
      expect(await store.get(unique('empty'), 'a')).toBeUndefined();
    });

    contractCase('list answers every document of a collection', async () => {
      const store = await open();
      const collection = unique('documents');
      expect(await store.list(collection)).toEqual([]);
      await store.put(collection, 'a', 1);
      await store.put(collection, 'b', { b: true });
      await store.put(collection, 'c', 'three');
      const listed = await store.list(collection);
      expect(listed.sort((left, right) => left.id.localeCompare(right.id))).toEqual([
        { id: 'a', value: 1 },
        { id: 'b', value: { b: true } },
        { id: 'c', value: 'three' },
      ]);
    });

    contractCase('delete removes a document and says whether it existed', async () => {
      const store = await open();
      const collection = unique('documents');
      await store.put(collection, 'a', 1);
      await store.put(collection, 'b', 2);
      expect(await store.delete(collection, 'a')).toBe(true);
      expect(await store.delete(collection, 'a')).toBe(false);
      expect(await store.delete(collection, 'never')).toBe(false);
      expect(await store.get(collection, 'a')).toBeUndefined();
      expect(await store.list(collection)).toEqual([{ id: 'b', value: 2 }]);
    });

    contractCase('put overwrites', async () => {
      const store = await open();
      const collection = unique('documents');
      await store.put(collection, 'a', { version: 1, dropped: true });
      await store.put(collection, 'a', { version: 2 });
      expect(await store.get(collection, 'a')).toEqual({ version: 2 });
      expect(await store.list(collection)).toHaveLength(1);
    });

    contractCase('collections are isolated', async () => {
      const store = await open();
      const keys = unique('keys');
      const budgets = unique('budgets');
      await store.put(keys, 'same-id', 'a key');
      await store.put(budgets, 'same-id', 'a budget');
      expect(await store.get(keys, 'same-id')).toBe('a key');
      expect(await store.get(budgets, 'same-id')).toBe('a budget');
      await store.delete(keys, 'same-id');
      expect(await store.get(budgets, 'same-id')).toBe('a budget');
      expect(await store.list(keys)).toEqual([]);
    });

    contractCase('documents round-trip as JSON, and callers never share objects with the store', async () => {
      const store = await open();
      const collection = unique('documents');
      const value = {
        text: 'quotes " backslashes \\ newlines \n unicode é 🚀',
        numbers: [0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER],
        flags: { yes: true, no: false, nothing: null },
        nested: { deeper: { deepest: [{ id: 'x', tags: [] }, {}] } },
        at: new Date(0),
        dropped: undefined,
      };
      await store.put(collection, 'nested', value);
      await store.put(collection, 'scalar', 42);
      await store.put(collection, 'null', null);
      await store.put(collection, '__proto__', 'an id like any other');
      const expected = JSON.parse(JSON.stringify(value));
      expect(expected.at).toBe('1970-01-01T00:00:00.000Z');

      value.nested.deeper.deepest.push({ id: 'added after put', tags: [] });
      const read = (await store.get(collection, 'nested')) as typeof expected;
      expect(read).toEqual(expected);
      read.nested.deeper.deepest = [];
      expect(await store.get(collection, 'nested')).toEqual(expected);
      expect(await store.get(collection, 'scalar')).toBe(42);
      expect(await store.get(collection, 'null')).toBeNull();
      expect(await store.get(collection, '__proto__')).toBe('an id like any other');
    });

    contractCase('put refuses a value that has no JSON form', async () => {
      const store = await open();
      await expect(store.put(unique('documents'), 'a', undefined)).rejects.toThrow(TypeError);
    });

    contractCase('publish delivers to a subscriber, outside the publisher’s stack', async () => {
      const store = await open();
      const channel = unique('channel');
      const received = recorder();
      await store.subscribe(channel, received.handler);
      const published = store.publish(channel, 'first');
      expect(received.messages).toEqual([]);
      await published;
      await store.publish(channel, 'second');
      // Arrival order is not part of the contract: Redis Cluster relays a PUBLISH between nodes, so two
      // messages sent through different nodes can arrive swapped. Their numbers say which came first.
      await vi.waitFor(
        () => expect([...received.messages].sort()).toEqual(['first', 'second']),
        DELIVERY_TIMEOUT_MS,
      );
    });

    contractCase('messages are numbered per channel, and the count is the last number', async () => {
      const store = await open();
      const channel = unique('channel');
      const received: Array<[string, number]> = [];
      await store.subscribe(channel, (message, sequence) => received.push([message, sequence]));
      expect(await store.changeCount(channel)).toBe(0);
      await store.publish(channel, 'first');
      await store.publish(channel, 'second words');
      await store.publish(unique('channel'), 'elsewhere');
      await vi.waitFor(
        () =>
          expect(received.toSorted((a, b) => a[1] - b[1])).toEqual([
            ['first', 1],
            ['second words', 2],
          ]),
        DELIVERY_TIMEOUT_MS,
      );
      expect(await store.changeCount(channel)).toBe(2);
    });

    contractCase('the epoch marker is set once: the first candidate wins', async () => {
      const store = await open();
      const first = await store.markEpoch('epoch-one');
      expect(await store.markEpoch('epoch-two')).toBe(first);
      expect(await store.readEpoch()).toBe(first);
    });

    contractCase('unsubscribe stops delivery', async () => {
      const store = await open();
      const channel = unique('channel');
      const staying = recorder();
      const leaving = recorder();
      await store.subscribe(channel, staying.handler);
      const unsubscribe = await store.subscribe(channel, leaving.handler);
      await store.publish(channel, 'before');
      await vi.waitFor(() => expect(leaving.messages).toEqual(['before']), DELIVERY_TIMEOUT_MS);
      await unsubscribe();
      await unsubscribe();
      await store.publish(channel, 'after');
      await vi.waitFor(() => expect(staying.messages).toEqual(['before', 'after']), DELIVERY_TIMEOUT_MS);
      expect(leaving.messages).toEqual(['before']);
    });

    contractCase('every subscriber of a channel receives each message, and only its channel’s', async () => {
      const store = await open();
      const channel = unique('channel');
      const first = recorder();
      const second = recorder();
      const elsewhere = recorder();
      await store.subscribe(channel, first.handler);
      await store.subscribe(channel, second.handler);
      await store.subscribe(unique('channel'), elsewhere.handler);
      await store.publish(channel, 'hello');
      await vi.waitFor(() => {
        expect(first.messages).toEqual(['hello']);
        expect(second.messages).toEqual(['hello']);
      }, DELIVERY_TIMEOUT_MS);
      expect(elsewhere.messages).toEqual([]);
    });

    contractCase('a subscriber that throws does not keep the others from their messages', async () => {
      const store = await open();
      const channel = unique('channel');
      const received = recorder();
      await store.subscribe(channel, () => {
        throw new Error('a subscriber failing on purpose');
      });
      await store.subscribe(channel, received.handler);
      await store.publish(channel, 'one');
      await store.publish(channel, 'two');
      await vi.waitFor(() => expect(received.messages).toEqual(['one', 'two']), DELIVERY_TIMEOUT_MS);
    });

    contractCase('a second store over the same state sees the documents of the first', async () => {
      const first = await open();
      const collection = unique('documents');
      await first.put(collection, 'a', { secret: 'kept' });
      await first.put(collection, 'b', 2);
      await first.put(collection, 'c', 3);
      await first.delete(collection, 'c');
      await first.close();
      const second = await open();
      expect(await second.get(collection, 'a')).toEqual({ secret: 'kept' });
      const listed = await second.list(collection);
      expect(listed.map((document) => document.id).sort()).toEqual(['a', 'b']);
    });

    contractCase('a message published by one store reaches a subscriber of another', async () => {
      const subscribing = await open();
      const publishing = await open();
      const channel = unique('channel');
      const received = recorder();
      await subscribing.subscribe(channel, received.handler);
      await publishing.publish(channel, 'across');
      await vi.waitFor(() => expect(received.messages).toEqual(['across']), DELIVERY_TIMEOUT_MS);
    });

    const unknownSkips = Object.keys(skip).filter((name) => !caseNames.has(name));
    if (unknownSkips.length > 0) {
      throw new Error(`runStoreContract(${options.name}): no case is named ${unknownSkips.join(', ')}`);
    }

    // --- governance admission -------------------------------------------------------------------------

    const far = () => Date.now() + 3_600_000;
    const check = (key: string, limit: number, need: number, amount: number) => ({
      key,
      limit,
      need,
      amount,
      expireAtMs: far(),
    });

    contractCase('admit adds the required amounts only when every check passes', async () => {
      const store = await open();
      const [requests, budget] = [unique('requests'), unique('budget')];
      const admitted = await store.admit({
        required: [check(requests, 2, 1, 1), check(budget, 100, 1, 0)],
        alternatives: [],
      });
      expect(admitted).toEqual({ allowed: true, passing: [] });
      await store.admit({ required: [check(requests, 2, 1, 1)], alternatives: [] });
      const refused = await store.admit({
        required: [check(budget, 100, 1, 5), check(requests, 2, 1, 1)],
        alternatives: [],
      });
      expect(refused).toMatchObject({ allowed: false, failed: { group: -1, index: 1, current: 2 } });
      // Nothing of a refused admission was added.
      expect(await store.readCounters([requests, budget, unique('absent')])).toEqual([2, 0, 0]);
    });

    contractCase('admit charges the first passing alternative and reports every passing one', async () => {
      const store = await open();
      const [full, open1, open2] = [unique('full'), unique('open'), unique('open')];
      await store.admit({ required: [check(full, 1, 1, 1)], alternatives: [] });
      const result = await store.admit({
        required: [],
        alternatives: [[check(full, 1, 1, 1)], [check(open1, 5, 1, 1)], [check(open2, 5, 1, 1)]],
      });
      expect(result).toEqual({ allowed: true, passing: [1, 2] });
      expect(await store.readCounters([full, open1, open2])).toEqual([1, 1, 0]);
      const none = await store.admit({ required: [], alternatives: [[check(full, 1, 1, 1)]] });
      expect(none).toMatchObject({ allowed: false, failed: { group: 0, index: 0, current: 1 }, passing: [] });
    });

    contractCase('admit is exact under concurrency: 300 requests against a limit of 40', async () => {
      const store = await open();
      const key = unique('burst');
      const results = await Promise.all(
        Array.from({ length: 300 }, () =>
          store.admit({ required: [check(key, 40, 1, 1)], alternatives: [] }),
        ),
      );
      expect(results.filter((result) => result.allowed)).toHaveLength(40);
      expect(await store.readCounters([key])).toEqual([40]);
    });

    contractCase('a reservation settles exactly once and is due after its deadline', async () => {
      const store = await open();
      const [budget, id] = [unique('budget'), unique('reservation')];
      const deadlineMs = Date.now() - 1;
      await store.admit({
        required: [check(budget, 1_000, 300, 300)],
        alternatives: [],
        reservation: { id, deadlineMs, payload: '{"estimate":300}' },
      });
      expect(await store.readCounters([budget])).toEqual([300]);
      expect(await store.dueReservations(Date.now(), 1_000)).toContainEqual({
        id,
        payload: '{"estimate":300}',
        alternative: -1,
      });
      expect(await store.readReservation(id)).toEqual({ id, payload: '{"estimate":300}', alternative: -1 });
      const adjustment = { key: budget, delta: -180, expireAtMs: far() };
      const settles = await Promise.all(
        [1, 2, 3].map(() => store.settleReservation({ id, adjustments: [adjustment] })),
      );
      expect(settles.filter(Boolean)).toHaveLength(1);
      expect(await store.readCounters([budget])).toEqual([120]);
      expect((await store.dueReservations(Date.now(), 1_000)).map((due) => due.id)).not.toContain(id);
      expect(await store.readReservation(id)).toBeUndefined();
      expect(await store.settleReservation({ id: unique('never'), adjustments: [adjustment] })).toBe(false);
    });

    contractCase("keeps a request's call reports in order until they expire", async () => {
      const store = await open();
      const [kept, short] = [unique('request'), unique('request')];
      await Promise.all([store.reportCall(kept, 'first', 60_000), store.reportCall(short, 'gone', 1)]);
      await store.reportCall(kept, 'second', 60_000);
      expect(await store.readCallReports(kept)).toEqual(['first', 'second']);
      expect(await store.readCallReports(unique('never'))).toEqual([]);
      await vi.waitFor(
        async () => expect(await store.readCallReports(short)).toEqual([]),
        DELIVERY_TIMEOUT_MS,
      );
    });

    contractCase('gives a claim to its first holder until it expires, however many race for it', async () => {
      const store = await open();
      const [name, short] = [unique('claim'), unique('claim')];
      const holders = await Promise.all(
        ['a', 'b', 'c', 'd'].map((holder) => store.claim(name, holder, 60_000)),
      );
      expect(new Set(holders).size).toBe(1);
      const [first] = holders;
      expect(await store.claim(name, first!, 60_000)).toBe(first);
      expect(await store.claim(name, 'late', 60_000)).toBe(first);
      expect(await store.claim(short, 'gone', 1)).toBe('gone');
      await vi.waitFor(
        async () => expect(await store.claim(short, 'next', 60_000)).toBe('next'),
        DELIVERY_TIMEOUT_MS,
      );
    });

    contractCase('admits a reservation id once, also after it settled', async () => {
      const store = await open();
      const [budget, id] = [unique('budget'), unique('reservation')];
      const admit = () =>
        store.admit({
          required: [check(budget, 1_000, 300, 300)],
          alternatives: [],
          reservation: { id, deadlineMs: far(), payload: 'p' },
        });
      expect(await admit()).toEqual({ allowed: true, passing: [] });
      expect(await admit()).toMatchObject({ allowed: true, duplicate: true });
      expect(await store.readCounters([budget])).toEqual([300]);
      expect(
        await store.settleReservation({ id, adjustments: [{ key: budget, delta: -100, expireAtMs: far() }] }),
      ).toBe(true);
      expect(await admit()).toMatchObject({ allowed: true, duplicate: true });
      expect(await store.readCounters([budget])).toEqual([200]);
      expect(await store.readReservation(id)).toBeUndefined();
    });

    contractCase('counters, reservations and claims outlive a reopen', async () => {
      const first = await open();
      const [key, id, claimed] = [unique('kept'), unique('reservation'), unique('claim')];
      await first.admit({
        required: [check(key, 10, 1, 3)],
        alternatives: [],
        reservation: { id, deadlineMs: 1, payload: 'p' },
      });
      await first.claim(claimed, 'first', 60_000);
      await first.close();
      const second = await open();
      expect(await second.readCounters([key])).toEqual([3]);
      expect(await second.settleReservation({ id, adjustments: [] })).toBe(true);
      expect(await second.claim(claimed, 'second', 60_000)).toBe('first');
    });
  });
}

function unique(name: string): string {
  return `${name}-${randomUUID()}`;
}

function recorder(): { messages: string[]; handler: (message: string) => void } {
  const messages: string[] = [];
  return { messages, handler: (message) => void messages.push(message) };
}
