// The cache stage's own cost on a request, in process: the same pipeline (authorize, stages, a router that
// answers at once) with and without the stage, every request a new question (a miss, whose answer is then
// stored), and with one question asked again and again (an exact hit). Part of `pnpm bench:cache`.
import { setImmediate as yieldToStores } from 'node:timers/promises';
import { MemoryCacheBackend, SemanticCache } from '@gw/cache';
import type { Admission } from '@gw/governance';
import { cacheStage, createPipeline, type PipelineCall, type Stage } from '@gw/ingress';
import type { CompletionResult, RouterService } from '@gw/router';
import { createLogger, createMetrics, fixed, parseGatewayConfig } from '@gw/shared';
import { summarize } from './load.ts';

const SAMPLES = 5_000;
const BUDGET_MS = 1_500;

const answer: CompletionResult = {
  provider: 'openai',
  response: {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
    extra_fields: { provider: 'openai', model_params: {}, latency: 0.001 },
  },
};

function pipelineOf(stages: Stage[]) {
  const router = { complete: async () => answer } as Pick<RouterService, 'complete'> as RouterService;
  const admission = {
    authorize: async () => ({ targets: [{ provider: 'openai', model: 'gpt-4o-mini' }], virtualKeyId: 'vk' }),
  } as Pick<Admission, 'authorize'> as Admission;
  const settler = { settle: () => undefined, drain: async () => undefined };
  return createPipeline({ admission, router, settler, stages });
}

const call = (question: string): PipelineCall => ({
  requestId: 'bench',
  headers: {},
  signal: new AbortController().signal,
  answerHeaders: { headersSent: false, setHeader: () => undefined },
  parsed: {
    operation: 'chat',
    target: { provider: 'openai', model: 'gpt-4o-mini' },
    fallbacks: [],
    messages: [
      { role: 'system', content: 'You are a helpful assistant. Answer in one sentence.' },
      { role: 'user', content: question },
    ],
    params: { temperature: 0, max_tokens: 64 },
    stream: false,
  },
});

/** p50 of `run` in µs; the stores a miss leaves for after its answer run between samples, untimed. */
async function p50(run: (index: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let index = 0; index < 200; index++) await run(index);
  const samples: number[] = [];
  const deadline = performance.now() + BUDGET_MS;
  for (let index = 200; samples.length < SAMPLES && performance.now() < deadline; index++) {
    const start = performance.now();
    await run(index);
    samples.push((performance.now() - start) * 1_000);
    await yieldToStores();
  }
  const stats = summarize(samples);
  return { p50: stats.p50, p99: stats.p99 };
}

/** Prints the pipeline's time per request without the stage, with it on a miss, and on an exact hit. */
export async function measureCacheStage(): Promise<void> {
  const config = parseGatewayConfig({ cache: { enabled: true, types: ['exact'] } }).cache;
  const backend = new MemoryCacheBackend();
  const stage = cacheStage({
    cache: new SemanticCache({ backend }),
    config: fixed(config),
    router: {} as RouterService,
    metrics: createMetrics({ service: 'bench', defaultMetrics: false }),
    logger: createLogger({ service: 'bench', level: 'silent' }),
  });
  const without = pipelineOf([]);
  const withCache = pipelineOf([stage]);
  const off = await p50((index) => without.complete(call(`What is the capital of country number ${index}?`)));
  const miss = await p50((index) =>
    withCache.complete(call(`Which city is the capital of country ${index}?`)),
  );
  const hit = await p50(() => withCache.complete(call('Which city is the capital of country 1?')));
  const row = (name: string, stats: { p50: number; p99: number }) =>
    console.log(
      `${name.padEnd(58)} p50 ${stats.p50.toFixed(1).padStart(9)} µs   p99 ${stats.p99.toFixed(1).padStart(9)} µs`,
    );
  row('pipeline, cache off (no stage)', off);
  row('pipeline, cache stage, miss (answer stored after it)', miss);
  row('pipeline, cache stage, exact hit (memory)', hit);
  console.log(
    `${'a miss adds (p50 difference)'.padEnd(58)} ${(miss.p50 - off.p50).toFixed(1).padStart(13)} µs`,
  );
  await backend.close();
}
