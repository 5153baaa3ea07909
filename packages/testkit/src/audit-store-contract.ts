import { afterEach, describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  type AuditEventInput,
  type AuditRecord,
  type AuditStore,
  auditHash,
  auditRecords,
  GENESIS_HASH,
} from '../../logs/src/index.ts';
import { untilClockPasses } from './wait-for.ts';

/** A store under test, and the database behind it as someone with access to it would reach it. */
export interface AuditStoreHandle {
  store: AuditStore;
  /** Runs SQL on the store's database (the table is `audit_log`): how a test tampers with records. */
  sql(statement: string): Promise<void>;
  /** Opens another store on the same database (another process's), closed by the suite. */
  another(): Promise<AuditStore>;
}

export interface AuditStoreContractOptions {
  /** Names the implementation in the test titles. */
  name: string;
  /** Opens an empty store of its own (a fresh file, a fresh schema). */
  create: () => Promise<AuditStoreHandle>;
  /** Case name → why this implementation does not run it. */
  skip?: Record<string, string>;
}

/** An event with every required field; overrides on top. */
export function auditEvent(overrides: Partial<AuditEventInput> = {}): AuditEventInput {
  return {
    actor: 'bootstrap',
    role: 'admin',
    action: 'update',
    target: 'PUT /api/providers/openai',
    status: 200,
    request_id: 'request-0',
    ...overrides,
  };
}

/** Six events that filters tell apart (seq 1 to 6 in this order). */
const FILTER_EVENTS: AuditEventInput[] = [
  auditEvent({ action: 'create', target: 'POST /api/providers', status: 201, request_id: 'r1' }),
  auditEvent({
    actor: 'token:t1',
    role: 'viewer',
    action: 'access_denied',
    target: 'POST /api/providers',
    status: 403,
    request_id: 'r2',
  }),
  auditEvent({ target: 'PUT /api/providers/openai', request_id: 'r3' }),
  auditEvent({
    actor: 'anonymous',
    role: null,
    action: 'access_denied',
    target: 'GET /api/providers',
    status: 401,
    request_id: 'r4',
  }),
  auditEvent({
    actor: 'token:t1',
    role: 'viewer',
    action: 'delete',
    target: 'DELETE /api/governance/virtual-keys/vk-1',
    request_id: 'r5',
  }),
  auditEvent({ action: 'delete', target: 'DELETE /api/providers/openai', status: 404, request_id: 'r6' }),
];

const FILTER_CASES: Array<[Record<string, unknown>, number[]]> = [
  [{}, [1, 2, 3, 4, 5, 6]],
  [{ actor: 'bootstrap' }, [1, 3, 6]],
  [{ role: 'viewer' }, [2, 5]],
  [{ action: 'access_denied' }, [2, 4]],
  [{ target_prefix: 'POST /api/providers' }, [1, 2]],
  [{ target_prefix: 'PUT /api/providers/' }, [3]],
  // Case-sensitive, and LIKE's wildcards are plain characters.
  [{ target_prefix: 'post /api' }, []],
  [{ target_prefix: '%' }, []],
  [{ target_prefix: 'DELETE /api/_roviders' }, []],
  [{ status: 403 }, [2]],
  [{ request_id: 'r5' }, [5]],
  [{ actor: 'bootstrap', action: 'delete' }, [6]],
  [{ actor: 'token:t1', status: 401 }, []],
];

const seqs = (records: AuditRecord[]) => records.map((record) => record.seq);

/** The behaviour every AuditStore owes the admin API, the sink and the verify command. */
export function runAuditStoreContract(options: AuditStoreContractOptions): void {
  describe(`AuditStore contract: ${options.name}`, () => {
    const opened: AuditStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    const contractCase = (name: string, body: (handle: AuditStoreHandle) => Promise<void>) => {
      const reason = options.skip?.[name];
      const run = async () => {
        const handle = await options.create();
        opened.push(handle.store);
        await body({
          ...handle,
          another: async () => {
            const store = await handle.another();
            opened.push(store);
            return store;
          },
        });
      };
      if (reason === undefined) it(name, run);
      else it.skip(`${name} (skipped: ${reason})`, run);
    };

    contractCase('ping answers while an append could be made, and appends nothing', async ({ store }) => {
      await expect(store.ping()).resolves.toBeUndefined();
      await store.append(auditEvent());
      await store.ping();
      expect((await store.query({})).records.map((record) => record.seq)).toEqual([1]);
    });

    contractCase(
      'append answers the record: seq from 1, time, the event with null for what it left out, chained hashes',
      async ({ store }) => {
        const started = Date.now();
        const first = await store.append(auditEvent({ role: undefined }));
        const second = await store.append(
          auditEvent({
            action: 'create',
            target: 'POST /api/governance/virtual-keys',
            status: 201,
            source: '::ffff:127.0.0.1',
            request_id: 'request-1',
            detail: 'made',
            before: null,
            after: { id: 'vk-1', value: '[redacted]' },
          }),
        );
        expect(first).toEqual({
          seq: 1,
          time: first.time,
          actor: 'bootstrap',
          role: null,
          action: 'update',
          target: 'PUT /api/providers/openai',
          status: 200,
          source: null,
          request_id: 'request-0',
          detail: null,
          before: null,
          after: null,
          prev_hash: GENESIS_HASH,
          hash: auditHash(first),
        });
        expect(first.time).toBeGreaterThanOrEqual(started);
        expect(second).toMatchObject({
          seq: 2,
          prev_hash: first.hash,
          after: { id: 'vk-1', value: '[redacted]' },
        });
        expect(second.hash).toBe(auditHash(second));
        expect(second.time).toBeGreaterThanOrEqual(first.time);
        expect(second.time).toBeLessThanOrEqual(Date.now());
        expect(await store.get(1)).toEqual(first);
        expect(await store.get(2)).toEqual(second);
        expect(await store.get(3)).toBeUndefined();
      },
    );

    contractCase('keeps any JSON value in before and after exactly as given', async ({ store }) => {
      const state = {
        name: 'ünïcødé "quoted" \\ back\nslash',
        numbers: [0, -1, 0.1, 1e21, 2 ** 53 - 1, 1.5e-7],
        nested: { empty: {}, list: [], flag: true, nothing: null },
        emoji: '🙂',
        nul: 'a\u0000b',
      };
      const record = await store.append(
        auditEvent({ before: state, after: ['a', 1, null], detail: 'x\u0000y' }),
      );
      expect(record.before).toEqual(state);
      expect(record.detail).toBe('x\uFFFDy');
      expect(await store.get(record.seq)).toEqual(record);
      expect(await store.verify()).toMatchObject({ ok: true, records: 1 });
    });

    contractCase('refuses an event that is not one, storing nothing', async ({ store }) => {
      await expectRefused(store.append(auditEvent({ actor: '' })), 'actor');
      await expectRefused(store.append(auditEvent({ action: 'Create' })), 'action');
      await expectRefused(store.append(auditEvent({ status: 42 })), 'status');
      await expectRefused(store.append(auditEvent({ target: 'x'.repeat(2049) })), 'target');
      await expectRefused(store.append(auditEvent({ after: { huge: 'x'.repeat(70_000) } })), 'after');
      await expectRefused(store.append({ ...auditEvent(), extra: 1 } as AuditEventInput), '');
      expect(await store.verify()).toEqual({ ok: true, records: 0, head: GENESIS_HASH });
    });

    contractCase('each filter alone and together selects exactly its records', async ({ store }) => {
      for (const event of FILTER_EVENTS) await store.append(event);
      for (const [filter, expected] of FILTER_CASES) {
        const page = await store.query({ ...filter, order: 'asc', limit: 1000 });
        expect({ filter, seqs: seqs(page.records) }).toEqual({ filter, seqs: expected });
        expect(page.next_cursor).toBeNull();
      }
    });

    contractCase('from and to select by the time of storing, to exclusive', async ({ store }) => {
      const records: AuditRecord[] = [];
      for (let index = 0; index < 6; index += 1) {
        records.push(await store.append(auditEvent({ request_id: `t${index}` })));
        // Each record at a time of its own.
        await untilClockPasses(records.at(-1)!.time);
      }
      const from = records[2]!.time;
      const to = records[4]!.time;
      const expected = records.filter((record) => record.time >= from && record.time < to).map((r) => r.seq);
      expect(expected).toContain(3);
      expect(seqs((await store.query({ from, to, order: 'asc' })).records)).toEqual(expected);
      expect(seqs((await store.query({ from: records[5]!.time + 1 })).records)).toEqual([]);
    });

    contractCase(
      'pages by seq either way with cursors, newest first by default, never repeating a record',
      async ({ store }) => {
        for (let index = 0; index < 23; index += 1)
          await store.append(auditEvent({ request_id: `p${index}` }));
        const walk = async (order: 'asc' | 'desc') => {
          const seen: number[] = [];
          let cursor: string | undefined;
          do {
            const page = await store.query({ order, limit: 5, ...(cursor && { cursor }) });
            seen.push(...seqs(page.records));
            cursor = page.next_cursor ?? undefined;
            // Appended between pages: a walk newest first never sees it, oldest first reaches it at the end.
            if (order === 'desc') await store.append(auditEvent({ request_id: 'later' }));
          } while (cursor !== undefined);
          return seen;
        };
        expect(await walk('desc')).toEqual(Array.from({ length: 23 }, (_, index) => 23 - index));
        const ascending = await walk('asc');
        expect(ascending).toEqual(Array.from({ length: ascending.length }, (_, index) => index + 1));
        expect(ascending.length).toBe(23 + 5);
        const first = await store.query();
        expect(seqs(first.records)[0]).toBe(28);
        expect(first.next_cursor).toBeNull();
        expect((await store.query({ limit: 2 })).next_cursor).toBe('27');
      },
    );

    contractCase('a bad query is refused naming the field', async ({ store }) => {
      await expectRefused(store.query({ limit: 0 }), 'limit');
      await expectRefused(store.query({ limit: 1001 }), 'limit');
      await expectRefused(store.query({ cursor: 'abc' }), 'cursor');
      await expectRefused(store.query({ cursor: '0' }), 'cursor');
      await expectRefused(store.query({ from: 10, to: 5 }), 'to');
      await expectRefused(store.query({ status: 1000 }), 'status');
      await expectRefused(store.query({ sort: 'time' } as never), '');
    });

    contractCase(
      'auditRecords reads every selected record oldest first, a page at a time',
      async ({ store }) => {
        for (let index = 0; index < 520; index += 1) {
          await store.append(
            auditEvent({ action: index % 2 === 0 ? 'create' : 'delete', request_id: `e${index}` }),
          );
        }
        const all: number[] = [];
        for await (const record of auditRecords(store)) all.push(record.seq);
        expect(all).toEqual(Array.from({ length: 520 }, (_, index) => index + 1));
        const creates: number[] = [];
        for await (const record of auditRecords(store, { action: 'create' })) creates.push(record.seq);
        expect(creates).toEqual(Array.from({ length: 260 }, (_, index) => 2 * index + 1));
        expect(await store.verify()).toMatchObject({ ok: true, records: 520 });
      },
    );

    contractCase(
      'verify answers ok with the count and the head hash of an intact chain',
      async ({ store }) => {
        expect(await store.verify()).toEqual({ ok: true, records: 0, head: GENESIS_HASH });
        for (const event of FILTER_EVENTS) await store.append(event);
        const last = await store.get(6);
        expect(await store.verify()).toEqual({ ok: true, records: 6, head: last!.hash });
      },
    );

    contractCase('verify names a record whose field was edited in the database', async ({ store, sql }) => {
      for (const event of FILTER_EVENTS) await store.append(event);
      await sql(`UPDATE audit_log SET "after" = '{"value":"sk-planted"}' WHERE "seq" = 3`);
      expect(await store.verify()).toMatchObject({ ok: false, seq: 3, reason: 'edited', records: 2 });
      await sql(`UPDATE audit_log SET "after" = NULL WHERE "seq" = 3`);
      expect(await store.verify()).toMatchObject({ ok: true, records: 6 });
      await sql(`UPDATE audit_log SET "status" = 200 WHERE "seq" = 2`);
      const broken = await store.verify();
      expect(broken).toMatchObject({ ok: false, seq: 2, reason: 'edited' });
      expect(!broken.ok && broken.message).toContain('record 2');
    });

    contractCase('verify names a record edited into something unreadable', async ({ store, sql }) => {
      for (const event of FILTER_EVENTS) await store.append(event);
      await sql(`UPDATE audit_log SET "before" = '{not json' WHERE "seq" = 4`);
      expect(await store.verify()).toMatchObject({ ok: false, seq: 4, reason: 'malformed', records: 3 });
    });

    contractCase('verify names the gap a deleted record leaves', async ({ store, sql }) => {
      for (const event of FILTER_EVENTS) await store.append(event);
      await sql(`DELETE FROM audit_log WHERE "seq" = 2`);
      const broken = await store.verify();
      expect(broken).toMatchObject({ ok: false, seq: 2, reason: 'missing', records: 1 });
      expect(!broken.ok && broken.message).toBe('record 2 is missing: the next record is 3');
      await sql(`DELETE FROM audit_log WHERE "seq" = 1`);
      expect(await store.verify()).toMatchObject({ ok: false, seq: 1, reason: 'missing', records: 0 });
    });

    contractCase('verify names reordered and renumbered records', async ({ store, sql }) => {
      for (const event of FILTER_EVENTS) await store.append(event);
      await sql(`UPDATE audit_log SET "seq" = 1000 WHERE "seq" = 2`);
      await sql(`UPDATE audit_log SET "seq" = 2 WHERE "seq" = 3`);
      await sql(`UPDATE audit_log SET "seq" = 3 WHERE "seq" = 1000`);
      expect(await store.verify()).toMatchObject({ ok: false, seq: 2, reason: 'unlinked', records: 1 });
    });

    contractCase(
      'appends go on after a check and after reopening, on the same chain',
      async ({ store, another }) => {
        await store.append(auditEvent({ request_id: 'a' }));
        const other = await another();
        const appended = await other.append(auditEvent({ request_id: 'b' }));
        expect(appended.seq).toBe(2);
        expect(await store.get(2)).toEqual(appended);
        expect(await store.verify()).toEqual({ ok: true, records: 2, head: appended.hash });
      },
    );

    contractCase(
      'appends at once, from one store and from another on the same database, make one chain',
      async ({ store, another }) => {
        const other = await another();
        const appends = Array.from({ length: 40 }, (_, index) =>
          (index % 2 === 0 ? store : other).append(auditEvent({ request_id: `c${index}` })),
        );
        const records = await Promise.all(appends);
        expect(records.map((record) => record.seq).sort((left, right) => left - right)).toEqual(
          Array.from({ length: 40 }, (_, index) => index + 1),
        );
        expect(new Set(records.map((record) => record.request_id)).size).toBe(40);
        expect(await store.verify()).toMatchObject({ ok: true, records: 40 });
        const times = seqs((await store.query({ order: 'asc', limit: 40 })).records);
        expect(times).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
        const ordered = (await store.query({ order: 'asc', limit: 40 })).records.map((record) => record.time);
        expect(ordered).toEqual([...ordered].sort((left, right) => left - right));
      },
    );
  });
}

async function expectRefused(promise: Promise<unknown>, field: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ZodError);
  expect((error as ZodError).issues.map((issue) => issue.path.join('.'))).toContain(field);
}
