/**
 * How many request-log records per second reach PostgreSQL (the target is 5,000/s), two ways:
 * - direct: LogWriter → PostgresLogStore (what one log worker's insert path sustains);
 * - stream: LogWriter → RedisLogProducer → Redis stream → RedisLogConsumer → PostgresLogStore (cluster mode).
 * For BENCH_LOG_SECONDS (5) per way, records are offered as fast as the writer's buffer takes them (direct),
 * or at BENCH_LOG_STREAM_RATE (6,000) per second (stream: as fast as possible would fill Redis far faster than
 * any worker empties it, and the run would end before the worker caught up; 0 offers as fast as possible).
 * The figure is end to end: records stored / time from the first offer until the last one was stored (2 s
 * at most after offering stops). The stream's consumer runs in a worker thread, as the log worker runs in
 * its own process in a cluster (on this machine they still share its two cores).
 *
 * pnpm bench:log-writer   (needs PostgreSQL, GW_TEST_POSTGRES_URL, and Redis, REDIS_URL)
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay, setImmediate as nextTurn } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type LogRecordInput, LogWriter } from '@gw/logs';
import { PostgresLogStore } from '@gw/logs/postgres';
import { logStreamKey, RedisLogConsumer, RedisLogProducer } from '@gw/logs/redis';
import { createTestDatabase } from '@gw/testkit/postgres';
import { Redis } from 'ioredis';

const SECONDS = Number(process.env['BENCH_LOG_SECONDS'] ?? 5);
const CONTENT_BYTES = Number(process.env['BENCH_LOG_CONTENT_BYTES'] ?? 1_024);
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** The stream way is offered this many records per second (0: as fast as the writer takes them). */
const STREAM_RATE = Number(process.env['BENCH_LOG_STREAM_RATE'] ?? 6_000);

const run = randomBytes(4).toString('hex');
/** 64 different texts of about CONTENT_BYTES, so PostgreSQL compresses what real content would give it. */
const WORDS =
  'the a model token request answer gateway latency provider cache budget team customer summary'.split(' ');
const texts = Array.from({ length: 64 }, (_, seed) => {
  let text = '';
  for (let index = 0; text.length < CONTENT_BYTES; index += 1) {
    text += `${WORDS[(seed * 7 + index * index * 13) % WORDS.length]}${index % 9 === 0 ? seed * index : ''} `;
  }
  return text.slice(0, CONTENT_BYTES);
});
const PROVIDERS = ['openai', 'anthropic', 'gemini', 'bedrock'];

function record(index: number): LogRecordInput {
  return {
    id: `${run}-${index}`,
    time: Date.now(),
    surface: 'openai',
    route: '/v1/chat/completions',
    provider: PROVIDERS[index % PROVIDERS.length]!,
    model: 'gpt-4o-mini',
    requested_model: 'fast',
    status: index % 50 === 0 ? 502 : 200,
    error_type: index % 50 === 0 ? 'upstream_error' : null,
    latency_ms: 200 + (index % 700),
    time_to_first_token_ms: 80 + (index % 100),
    input_tokens: 500 + (index % 300),
    output_tokens: 120 + (index % 80),
    cost: 0.00042,
    virtual_key_id: `vk-${index % 20}`,
    virtual_key_name: `key ${index % 20}`,
    team_id: `team-${index % 5}`,
    selected_key_id: 'openai-key-1',
    fallback_index: 0,
    cache_outcome: 'miss',
    request_content: texts[index % 64]!,
    response_content: texts[(index * 5 + 1) % 64]!,
    trace_id: randomBytes(16).toString('hex'),
  };
}

interface Figures {
  offered: number;
  stored: number;
  perSecond: number;
  dropped: number;
}

/**
 * Offers records for SECONDS, as fast as the writer takes them or at `rate` per second (in 5 ms steps),
 * then closes the writer and waits (2 s at most) for `stored()` to reach what the writer handed on.
 */
async function measure(writer: LogWriter, stored: () => number, rate?: number): Promise<Figures> {
  const started = performance.now();
  let offered = 0;
  while (performance.now() - started < SECONDS * 1_000) {
    const room = 10_000 - writer.buffered;
    const due =
      rate === undefined ? room : Math.floor(((performance.now() - started) / 1_000) * rate) - offered;
    for (let index = 0; index < Math.min(due, 2_000); index += 1) writer.enqueue(record(offered++));
    await (rate === undefined && room > 0 ? nextTurn() : delay(rate === undefined ? 1 : 5));
  }
  await writer.close();
  const deadline = performance.now() + 2_000;
  while (stored() < writer.written && performance.now() < deadline) await delay(5);
  const perSecond = stored() / ((performance.now() - started) / 1_000);
  const dropped = Object.values(writer.dropped).reduce((sum, count) => sum + count, 0);
  return { offered, stored: stored(), perSecond, dropped };
}

async function count(url: string, schema: string): Promise<number> {
  const store = await PostgresLogStore.open({ url, schema });
  const stats = await store.stats({ bucket_ms: 31 * 24 * 3_600_000 });
  await store.close();
  return stats.buckets.reduce((sum, bucket) => sum + bucket.count, 0);
}

interface ConsumerData {
  url: string;
  prefix: string;
}

/** The log worker: stores the stream into PostgreSQL, posting its count every 20 ms until told to stop. */
async function runConsumer({ url, prefix }: ConsumerData): Promise<void> {
  const redis = new Redis(REDIS_URL);
  const store = await PostgresLogStore.open({ url, schema: 'stream' });
  const consumer = RedisLogConsumer.start({ redis, prefix, store });
  parentPort!.postMessage(0);
  const report = setInterval(() => parentPort!.postMessage(consumer.counts.inserted), 20);
  parentPort!.once('message', async () => {
    clearInterval(report);
    await consumer.close();
    await store.close();
    redis.disconnect();
    parentPort!.postMessage(consumer.counts.inserted);
    parentPort!.close();
  });
}

async function runBench(): Promise<void> {
  const database = await createTestDatabase();
  const redis = new Redis(REDIS_URL);
  const prefix = `gw-bench:${process.pid}:${run}:`;
  try {
    const direct = await PostgresLogStore.open({ url: database.url, schema: 'direct' });
    const directWriter = new LogWriter({ sink: direct });
    const directFigures = await measure(directWriter, () => directWriter.written);
    await direct.close();

    let inserted = 0;
    const worker = new Worker(new URL(import.meta.url), { workerData: { url: database.url, prefix } });
    // The first message says the consumer runs; each later one how many records it has stored.
    await new Promise((resolve) => worker.once('message', resolve));
    worker.on('message', (count: number) => {
      inserted = count;
    });
    const streamWriter = new LogWriter({
      sink: new RedisLogProducer({ redis, prefix, maxRecords: 1_000_000 }),
    });
    const streamFigures = await measure(streamWriter, () => inserted, STREAM_RATE || undefined);
    worker.postMessage('stop');
    await new Promise((resolve) => worker.once('exit', resolve));

    const row = (name: string, figures: Figures, inDatabase: number) =>
      `${name.padEnd(28)} ${Math.round(figures.perSecond).toLocaleString('en').padStart(7)} records/s` +
      `   (offered ${figures.offered.toLocaleString('en')}, dropped ${figures.dropped.toLocaleString('en')},` +
      ` in PostgreSQL ${inDatabase.toLocaleString('en')})`;
    const offer = STREAM_RATE ? `${STREAM_RATE.toLocaleString('en')}/s` : 'as fast as taken';
    console.log(
      `request-log writer: ${SECONDS} s per way, ~${CONTENT_BYTES} B each of request and response content;` +
        ` stream offered ${offer}; records stored per second, end to end`,
    );
    console.log(row('writer → PostgreSQL', directFigures, await count(database.url, 'direct')));
    console.log(row('writer → stream → PostgreSQL', streamFigures, await count(database.url, 'stream')));
  } finally {
    await redis.del(logStreamKey(prefix));
    redis.disconnect();
    await database.drop();
  }
}

if (isMainThread) await runBench();
else await runConsumer(workerData as ConsumerData);
