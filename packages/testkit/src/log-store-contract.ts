import { afterEach, describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import type { LogQueryInput, LogRecord, LogStore } from '../../logs/src/index.ts';
import { LogWriter } from '../../logs/src/index.ts';
import { runLogSpendContract } from './log-spend-contract.ts';
import { runLogStatsContract } from './log-stats-contract.ts';
import type { ContractCase } from './log-store-fixtures.ts';
import {
  FILTER_CASES,
  FILTER_RECORDS,
  fullLogRecord,
  largestRoutingDecision,
  logRecord,
  routingDecision,
  T0,
  TEXT_CASES,
  TEXT_RECORDS,
} from './log-store-fixtures.ts';

export interface LogStoreContractOptions {
  /** Names the implementation in the test titles. */
  name: string;
  /** Opens an empty store of its own (a fresh file, a fresh schema). */
  create: () => Promise<LogStore>;
  /** Case name → why this implementation does not run it. */
  skip?: Record<string, string>;
}

/** The behaviour every LogStore owes the writer, the log worker and `/api/logs`. */
export function runLogStoreContract(options: LogStoreContractOptions): void {
  describe(`LogStore contract: ${options.name}`, () => {
    const opened: LogStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    const contractCase: ContractCase = (name, body) => {
      const reason = options.skip?.[name];
      const run = async () => {
        const store = await options.create();
        opened.push(store);
        await body(store);
      };
      if (reason === undefined) it(name, run);
      else it.skip(`${name} (skipped: ${reason})`, run);
    };

    contractCase(
      'insert then get answers every field as written, and undefined for an unknown id',
      async (store) => {
        const full = fullLogRecord('full');
        const minimal = logRecord({ id: 'minimal' });
        await store.insert([full, minimal]);
        expect(await store.get('full')).toEqual(full);
        expect(await store.get('minimal')).toEqual(minimal);
        expect(minimal).toMatchObject({ provider: null, cost: 0, input_tokens: 0, content_truncated: false });
        expect(await store.get('unknown')).toBeUndefined();
      },
    );

    contractCase(
      'a routing decision reads back as written, by id and in a page; a record without one, without it',
      async (store) => {
        const routed = logRecord({ id: 'routed', routing: routingDecision() });
        const ruleless = logRecord({ id: 'ruleless', routing: { ...routingDecision(), rule: null } });
        const unrouted = logRecord({ id: 'unrouted' });
        const asNull = logRecord({ id: 'as-null', routing: null });
        await store.insert([routed, ruleless, unrouted, asNull]);
        expect((await store.get('routed'))?.routing).toEqual(routingDecision());
        expect(await store.get('routed')).toEqual(routed);
        expect((await store.get('ruleless'))?.routing?.rule).toBeNull();
        const page = await store.query();
        expect(new Map(page.records.map((record) => [record.id, record]))).toEqual(
          new Map([routed, ruleless, unrouted, asNull].map((record) => [record.id, record])),
        );
        for (const id of ['unrouted', 'as-null']) {
          expect((await store.get(id))?.routing).toBeUndefined();
          expect(page.records.find((record) => record.id === id)?.routing).toBeUndefined();
        }
      },
    );

    contractCase(
      'the largest routing decision a record keeps is stored whole; both writer paths cut a larger one to it',
      async (store) => {
        const largest = logRecord({ id: 'largest', routing: largestRoutingDecision() });
        expect(largest.routing).toEqual(largestRoutingDecision());
        await store.insert([largest]);
        expect(await store.get('largest')).toEqual(largest);
        const writer = new LogWriter({ sink: store, flushIntervalMs: 60_000 });
        writer.enqueue({ ...logRecord({ id: 'parsed' }), routing: largestRoutingDecision(5) });
        const decision = largestRoutingDecision(5);
        // The typed path takes what the router built: an infinite score too, which JSON cannot carry.
        decision.candidates[0]!.score = Number.POSITIVE_INFINITY;
        writer.enqueueRecord({ ...logRecord({ id: 'typed' }), routing: decision });
        await writer.close();
        expect(writer.written).toBe(2);
        expect((await store.get('parsed'))?.routing).toEqual(largestRoutingDecision());
        const { score: _, ...unscored } = largestRoutingDecision().candidates[0]!;
        const cut = largestRoutingDecision();
        cut.candidates[0] = unscored;
        expect((await store.get('typed'))?.routing).toEqual(cut);
        // The router's decision is its own: the record took a cut copy.
        expect(decision.candidates).toHaveLength(largestRoutingDecision(5).candidates.length);
      },
    );

    contractCase('an id already stored is ignored, in the same batch or a later one', async (store) => {
      await store.insert([logRecord({ id: 'x', status: 200 }), logRecord({ id: 'x', status: 500 })]);
      await store.insert([logRecord({ id: 'x', status: 502 }), logRecord({ id: 'y' })]);
      await store.insert([]);
      expect((await store.get('x'))?.status).toBe(200);
      expect(idsOf((await store.query()).records)).toEqual(['x', 'y'].sort());
    });

    contractCase('each filter alone and together selects exactly its records', async (store) => {
      await store.insert(FILTER_RECORDS);
      for (const [filter, ids] of FILTER_CASES) {
        const page = await store.query({ ...filter, limit: 1000 });
        expect({ filter, ids: idsOf(page.records) }).toEqual({ filter, ids: [...ids] });
        expect(page.next_cursor).toBeNull();
      }
    });

    contractCase(
      'sorts by time, latency and cost each way, ties broken by id the same way',
      async (store) => {
        await store.insert(FILTER_RECORDS);
        const order = async (query: LogQueryInput) =>
          (await store.query(query)).records.map((record) => record.id);
        expect(await order({})).toEqual([...'hgfedcba']);
        expect(await order({ sort: 'time', order: 'asc' })).toEqual([...'abcdefgh']);
        expect(await order({ sort: 'latency_ms', order: 'asc' })).toEqual([...'gcfabedh']);
        expect(await order({ sort: 'latency_ms', order: 'desc' })).toEqual([...'hdebafcg']);
        expect(await order({ sort: 'cost', order: 'asc' })).toEqual([...'cdfgbaeh']);
        expect(await order({ sort: 'cost', order: 'desc' })).toEqual([...'heabgfdc']);
      },
    );

    contractCase(
      'a cursor walks every record exactly once, in order, while records are inserted',
      async (store) => {
        const originals = Array.from({ length: 50 }, (_, index) =>
          logRecord({
            id: `r${String(index).padStart(2, '0')}`,
            time: T0 + index * 1000,
            latency_ms: index % 7,
          }),
        );
        await store.insert(originals);
        for (const [sort, order] of [
          ['time', 'desc'],
          ['latency_ms', 'asc'],
          ['cost', 'desc'],
        ] as const) {
          const seen: LogRecord[] = [];
          let cursor: string | undefined;
          let pages = 0;
          do {
            const page = await store.query({ sort, order, limit: 7, ...(cursor && { cursor }) });
            seen.push(...page.records);
            cursor = page.next_cursor ?? undefined;
            pages += 1;
            // Inserted between pages, on both sides of where the walk stands.
            await store.insert([
              logRecord({ id: `${sort}-early-${pages}`, time: T0 - pages, latency_ms: 100, cost: 1 }),
              logRecord({ id: `${sort}-late-${pages}`, time: T0 + 100_000 + pages, latency_ms: -0 }),
            ]);
          } while (cursor !== undefined);
          const seenIds = seen.map((record) => record.id);
          expect(new Set(seenIds).size).toBe(seenIds.length);
          expect(seenIds.filter((id) => /^r\d\d$/.test(id)).sort()).toEqual(
            originals.map((record) => record.id),
          );
          const keys = seen.map((record) => [record[sort], record.id] as const);
          const sorted = [...keys].sort(([leftValue, leftId], [rightValue, rightId]) => {
            const byValue = leftValue - rightValue || (leftId < rightId ? -1 : leftId > rightId ? 1 : 0);
            return order === 'asc' ? byValue : -byValue;
          });
          expect(keys).toEqual(sorted);
          expect(pages).toBeGreaterThanOrEqual(8);
        }
      },
    );

    contractCase(
      'limit defaults to 100, and a bad query or foreign cursor is refused naming the field',
      async (store) => {
        await store.insert(
          Array.from({ length: 120 }, (_, index) => logRecord({ id: `r${index}`, time: T0 + index })),
        );
        const first = await store.query();
        expect(first.records).toHaveLength(100);
        expect(first.records[0]?.id).toBe('r119');
        const rest = await store.query({ cursor: first.next_cursor! });
        expect(rest.records.map((record) => record.id)).toEqual(
          Array.from({ length: 20 }, (_, index) => `r${19 - index}`),
        );
        expect(rest.next_cursor).toBeNull();
        await expectRefused(store.query({ limit: 0 }), 'limit');
        await expectRefused(store.query({ limit: 1001 }), 'limit');
        await expectRefused(store.query({ cursor: first.next_cursor!, sort: 'cost' }), 'cursor');
        await expectRefused(store.query({ cursor: 'not-a-cursor' }), 'cursor');
        await expectRefused(store.query({ min_cost: 2, max_cost: 1 }), 'max_cost');
      },
    );

    contractCase(
      'text search finds a case-insensitive substring of either content, wildcards literal',
      async (store) => {
        await store.insert(TEXT_RECORDS);
        for (const [query, ids] of TEXT_CASES) {
          const page = await store.query({ ...query, limit: 1000 });
          expect({ query, ids: idsOf(page.records) }).toEqual({ query, ids });
        }
      },
    );

    contractCase(
      'retention deletes exactly the records older than the time, and says how many',
      async (store) => {
        const records = Array.from({ length: 2_500 }, (_, index) =>
          logRecord({ id: `old-${index}`, time: T0 + index, request_content: `needle-${index}` }),
        );
        await store.insert(records);
        expect(await store.deleteOlderThan(T0 + 2_000)).toBe(2_000);
        expect(await store.deleteOlderThan(T0 + 2_000)).toBe(0);
        const oldest = await store.query({ sort: 'time', order: 'asc', limit: 1 });
        expect(oldest.records[0]?.time).toBe(T0 + 2_000);
        const stats = await store.stats({ bucket_ms: 3_600_000 });
        expect(stats.buckets.map((bucket) => bucket.count)).toEqual([500]);
        expect(await store.get('old-1999')).toBeUndefined();
        expect((await store.query({ q: 'needle-1999' })).records).toEqual([]);
        expect(idsOf((await store.query({ q: 'needle-2000' })).records)).toEqual(['old-2000']);
        expect(await store.deleteOlderThan(T0 + 10_000)).toBe(500);
      },
    );

    contractCase(
      'dropped counts add up across processes, keep the larger total of a repeated row, and go with retention',
      async (store) => {
        const minute = 60_000;
        const row = (bucket: number, reason: string, source: string, count: number) => ({
          bucket_start: T0 + bucket * minute,
          reason,
          source,
          count,
        });
        await store.insertDropped([
          row(0, 'provider_queue_full', 'a', 3),
          row(0, 'provider_queue_full', 'b', 2),
        ]);
        // A process's later total for the same minute replaces its earlier one; a stale repeat changes nothing.
        await store.insertDropped([
          row(0, 'provider_queue_full', 'a', 5),
          row(0, 'provider_queue_full', 'b', 1),
        ]);
        await store.insertDropped([row(1, 'connection_cap', 'a', 4), row(90, 'log_buffer_full', 'a', 7)]);
        const hourly = await store.dropped({ from: T0, to: T0 + 2 * 3_600_000, bucket_ms: 3_600_000 });
        const hour = T0 - (T0 % 3_600_000);
        expect(hourly.buckets).toEqual([
          { start: hour, reason: 'connection_cap', count: 4 },
          { start: hour, reason: 'provider_queue_full', count: 7 },
          { start: hour + 3_600_000, reason: 'log_buffer_full', count: 7 },
        ]);
        expect(hourly.totals).toEqual({ connection_cap: 4, provider_queue_full: 7, log_buffer_full: 7 });
        const early = await store.dropped({ from: T0, to: T0 + minute, bucket_ms: minute });
        expect(early.buckets).toEqual([{ start: T0, reason: 'provider_queue_full', count: 7 }]);
        // `from` inside a minute: that minute's counts are in the range (it overlaps it).
        const within = await store.dropped({ from: T0 + minute / 2, to: T0 + minute, bucket_ms: minute });
        expect(within.buckets).toEqual([{ start: T0, reason: 'provider_queue_full', count: 7 }]);
        await expect(store.dropped({ bucket_ms: 10 })).rejects.toBeInstanceOf(ZodError);
        await store.deleteOlderThan(T0 + 2 * minute);
        expect((await store.dropped({})).totals).toEqual({ log_buffer_full: 7 });
      },
    );

    contractCase('the writer truncates content to whole UTF-8 characters, or keeps none', async (store) => {
      const writer = new LogWriter({ sink: store, contentMaxBytes: 10, flushIntervalMs: 10 });
      const content = { request_content: 'héllo wörld!', response_content: '日本語テキスト' };
      writer.enqueue({ ...logRecord({ id: 'cut' }), ...content });
      writer.enqueue({ ...logRecord({ id: 'short' }), request_content: 'tiny', response_content: '日本語' });
      writer.enqueue({ ...logRecord({ id: 'off' }), ...content }, { content: false });
      await writer.close();
      expect(await store.get('cut')).toMatchObject({
        request_content: 'héllo wö',
        response_content: '日本語',
        content_truncated: true,
      });
      expect(await store.get('short')).toMatchObject({ request_content: 'tiny', content_truncated: false });
      expect(await store.get('off')).toMatchObject({ request_content: null, response_content: null });
      const silent = new LogWriter({ sink: store, content: false });
      silent.enqueue({ ...logRecord({ id: 'global-off' }), ...content });
      await silent.close();
      expect(await store.get('global-off')).toMatchObject({ request_content: null, response_content: null });
      expect(writer.written + silent.written).toBe(4);
    });

    contractCase(
      'an async guardrail finding flags a record, in the writer or once stored, never over a stronger outcome',
      async (store) => {
        const writer = new LogWriter({ sink: store, flushIntervalMs: 60_000 });
        writer.enqueue(logRecord({ id: 'waiting', guardrail_outcome: 'passed' }));
        writer.flagGuardrail('waiting');
        await store.insert([
          logRecord({ id: 'stored' }),
          logRecord({ id: 'passed', guardrail_outcome: 'passed' }),
          logRecord({ id: 'redacted', guardrail_outcome: 'redacted' }),
          logRecord({ id: 'blocked', guardrail_outcome: 'blocked' }),
        ]);
        for (const id of ['stored', 'passed', 'redacted', 'blocked', 'never-written'])
          writer.flagGuardrail(id);
        await writer.close();
        const outcomes = await Promise.all(
          ['waiting', 'stored', 'passed', 'redacted', 'blocked'].map(
            async (id) => (await store.get(id))?.guardrail_outcome,
          ),
        );
        expect(outcomes).toEqual(['flagged', 'flagged', 'flagged', 'redacted', 'blocked']);
        expect(await store.get('never-written')).toBeUndefined();
      },
    );

    contractCase('a batch of 5,000 records is stored whole', async (store) => {
      const records = Array.from({ length: 5_000 }, (_, index) =>
        logRecord({
          id: `bulk-${String(index).padStart(4, '0')}`,
          time: T0 + index * 10,
          provider: index % 2 === 0 ? 'openai' : 'anthropic',
          latency_ms: index % 100,
          input_tokens: 10,
          request_content: `request ${index} `.repeat(20),
        }),
      );
      await store.insert(records);
      const stats = await store.stats({ bucket_ms: 3_600_000, group_by: 'provider' });
      expect(stats.buckets.map(({ group, count, input_tokens }) => ({ group, count, input_tokens }))).toEqual(
        [
          { group: 'anthropic', count: 2_500, input_tokens: 25_000 },
          { group: 'openai', count: 2_500, input_tokens: 25_000 },
        ],
      );
      expect(await store.get('bulk-4999')).toEqual(records[4_999]);
      const page = await store.query({ limit: 1000, provider: 'openai', sort: 'time', order: 'asc' });
      expect(page.records[999]?.id).toBe('bulk-1998');
    });

    runLogStatsContract(contractCase);
    runLogSpendContract(contractCase);
  });
}

function idsOf(records: LogRecord[]): string[] {
  return records.map((record) => record.id).sort();
}

async function expectRefused(promise: Promise<unknown>, field: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ZodError);
  expect((error as ZodError).issues.map((issue) => issue.path.join('.'))).toContain(field);
}
