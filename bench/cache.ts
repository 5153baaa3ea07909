// `pnpm bench:cache`: what the semantic cache costs a request, in µs at p50/p99:
// - a miss without semantic lookup: computing the keys plus an exact lookup (memory and Redis backends: the
//   Redis one answers a miss from its in-process index, without a round trip);
// - an exact hit (memory; Redis: one GET), and the same request sent direct to the mock upstream on loopback;
// - a semantic lookup over BENCH_CACHE_ENTRIES (10 000) entries of one scope and context with
//   BENCH_CACHE_DIMENSIONS (1536) dimensions: exhaustive cosine search over one Float32Array;
// - the start-up fill of a Redis replica's index with BENCH_CACHE_FILL (2 000) such entries;
// - the cache stage in the request pipeline (cache-stage.ts): what a miss and an exact hit cost a request.
// Bounded to about 20 s. Knobs: BENCH_CACHE_ENTRIES, BENCH_CACHE_DIMENSIONS, BENCH_CACHE_FILL (0 skips the
// fill), BENCH_CACHE_REDIS (0 skips Redis), REDIS_URL.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cacheKeys, MemoryCacheBackend, SemanticCache } from '@gw/cache';
import { RedisCacheBackend } from '@gw/cache/redis';
import { deleteRedisKeys, testRedisPrefix, wholeAnswer } from '@gw/testkit';
import { Pool } from 'undici';
import { measureCacheStage } from './cache-stage.ts';
import { summarize } from './load.ts';

const entries = Number(process.env['BENCH_CACHE_ENTRIES'] ?? 10_000);
const dimensions = Number(process.env['BENCH_CACHE_DIMENSIONS'] ?? 1536);
const fillEntries = Number(process.env['BENCH_CACHE_FILL'] ?? 2_000);
const withRedis = process.env['BENCH_CACHE_REDIS'] !== '0';
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** Each measured operation stops at this many samples or this much time, whichever comes first. */
const SAMPLES = 5_000;
const BUDGET_MS = 1_500;

const question = (index: number) => ({
  provider: 'openai',
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system' as const, content: 'You are a helpful assistant. Answer in one sentence.' },
    { role: 'user' as const, content: `What is the capital of country number ${index}?` },
  ],
  params: { temperature: 0, max_tokens: 64 },
});
const base = (index: number) => {
  const keys = cacheKeys(question(index), { embeddingModel: 'openai/text-embedding-3-small' });
  return {
    scope: 'vk_bench',
    hash: keys.exact,
    context: keys.context,
    provider: 'openai',
    model: 'gpt-4o-mini',
  };
};

function randomVector(): Float32Array {
  const vector = new Float32Array(dimensions);
  for (let index = 0; index < dimensions; index++) vector[index] = Math.random() * 2 - 1;
  return vector;
}

/** Runs `operation` repeatedly (after a warm-up) and reports its p50/p99 in µs. */
async function measure(name: string, operation: () => unknown): Promise<void> {
  for (let warm = 0; warm < 50; warm++) await operation();
  const samples: number[] = [];
  const deadline = performance.now() + BUDGET_MS;
  while (samples.length < SAMPLES && performance.now() < deadline) {
    const start = performance.now();
    await operation();
    samples.push((performance.now() - start) * 1_000);
  }
  const stats = summarize(samples);
  console.log(
    `${name.padEnd(58)} p50 ${stats.p50.toFixed(1).padStart(9)} µs   p99 ${stats.p99.toFixed(1).padStart(9)} µs   (n=${stats.count})`,
  );
}

async function exactAndMiss(cache: SemanticCache, label: string): Promise<void> {
  await cache.store({ ...base(0), answer: wholeAnswer('Paris.') });
  const stored = base(0);
  await measure(`${label}: miss (keys + exact lookup)`, async () => {
    const keys = cacheKeys(question(1));
    if (await cache.lookup({ scope: stored.scope, hash: keys.exact, types: ['exact'] }))
      throw new Error('hit');
  });
  await measure(`${label}: exact hit (lookup)`, async () => {
    if (!(await cache.lookup({ scope: stored.scope, hash: stored.hash }))) throw new Error('miss');
  });
}

async function semantic(): Promise<void> {
  const backend = new MemoryCacheBackend({ maxEntriesPerScope: entries });
  const cache = new SemanticCache({ backend });
  const vectors: Float32Array[] = [];
  const context = base(0).context;
  const rssBefore = process.memoryUsage().rss;
  const fillStart = performance.now();
  for (let index = 0; index < entries; index++) {
    const vector = randomVector();
    if (index < 64) vectors.push(vector);
    await cache.store({ ...base(index), context, vector, answer: wholeAnswer(String(index)) });
  }
  const megabytes = (process.memoryUsage().rss - rssBefore) / 1e6;
  console.log(
    `${`memory: ${entries} stores (vectors included)`.padEnd(58)} ${(performance.now() - fillStart).toFixed(0).padStart(6)} ms, RSS +${megabytes.toFixed(0)} MB`,
  );
  const queries = vectors
    .slice(0, 64)
    .map((vector) => vector.map((value) => value + (Math.random() - 0.5) * 0.01));
  let next = 0;
  await measure(`memory: semantic hit, ${entries} entries x ${dimensions} dims`, async () => {
    const query = queries[next++ % queries.length]!;
    const hit = await cache.lookup({ scope: 'vk_bench', hash: '0'.repeat(64), context, vector: query });
    if (hit?.hit !== 'semantic') throw new Error('no semantic hit');
  });
  await backend.close();
}

async function redis(): Promise<void> {
  const prefix = testRedisPrefix();
  const backend = await RedisCacheBackend.connect({ url: redisUrl, prefix });
  try {
    await exactAndMiss(new SemanticCache({ backend }), 'redis');
    if (fillEntries > 0) {
      const cache = new SemanticCache({ backend });
      const context = base(0).context;
      const stores = [];
      for (let index = 0; index < fillEntries; index++) {
        stores.push(
          cache.store({
            ...base(index),
            context,
            vector: randomVector(),
            answer: wholeAnswer(String(index)),
          }),
        );
        if (stores.length === 100) await Promise.all(stores.splice(0));
      }
      await Promise.all(stores);
      const start = performance.now();
      const replica = await RedisCacheBackend.connect({ url: redisUrl, prefix });
      console.log(
        `${`redis: a replica's start, index filled with ${fillEntries} entries`.padEnd(58)} ${(performance.now() - start).toFixed(0).padStart(6)} ms`,
      );
      await replica.close();
    }
  } finally {
    await backend.close();
    await deleteRedisKeys(redisUrl, prefix);
  }
}

/** The mock upstream of `pnpm bench`, as its own process; its URL. */
async function startMock(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bench/mock-upstream.ts'], {
    env: { ...process.env, MOCK_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout! }).once('line', resolve),
  );
  return { child, url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}` };
}

async function direct(): Promise<void> {
  const mock = await startMock();
  const pool = new Pool(mock.url, { connections: 1 });
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: question(0).messages });
  try {
    await measure('direct to the mock upstream (loopback, keep-alive)', async () => {
      const response = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
        body,
      });
      await response.body.json();
    });
  } finally {
    await pool.close();
    mock.child.kill();
  }
}

const started = performance.now();
const memory = new MemoryCacheBackend();
await exactAndMiss(new SemanticCache({ backend: memory }), 'memory');
await memory.close();
if (withRedis) await redis();
await direct();
await measureCacheStage();
await semantic();
console.log(`(${((performance.now() - started) / 1_000).toFixed(1)} s)`);
