// A harness for the cache stage's tests: the real pipeline (settle outside the stage) over a scripted router
// whose embeddings the test controls, the memory backend, and a clock the test moves.
import { MemoryCacheBackend, SemanticCache } from '@gw/cache';
import type { Admission, SettleRequest } from '@gw/governance';
import type {
  CompletionResult,
  CompletionRoute,
  EmbeddingsRoute,
  RouterService,
  StreamItem,
} from '@gw/router';
import {
  type ChatCompletionChunk,
  createLogger,
  createMetrics,
  fixed,
  GatewayError,
  type Message,
  parseGatewayConfig,
} from '@gw/shared';
import { chunkAnswer, waitFor } from '@gw/testkit';
import { cacheStage } from '../pipeline/cache-stage.ts';
import { createPipeline, type PipelineCall } from '../pipeline/pipeline.ts';
import { createSettler, settleStage } from '../pipeline/settle-stage.ts';

export const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const EMBEDDING_USAGE = { prompt_tokens: 4, total_tokens: 4 };

export function completion(content: string, finish: 'stop' | null = 'stop'): CompletionResult {
  return {
    provider: 'openai',
    response: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
      usage: USAGE,
      extra_fields: { provider: 'openai', model_params: {}, latency: 0.2, raw_response: { big: true } },
    },
  };
}

/** Router calls as the stage made them; `vectors` maps the text it embeds to the vector answered. */
export function cacheStageHarness(cacheSection: Record<string, unknown> = {}) {
  const clock = { now: 1_000_000 };
  const completions: CompletionRoute[] = [];
  const embeddings: EmbeddingsRoute[] = [];
  const settles: SettleRequest[] = [];
  const vectors = new Map<string, number[]>();
  const answers: Array<CompletionResult | Error> = [];
  const streams: Array<ChatCompletionChunk[] | Error> = [];
  const router = {
    async complete(route: CompletionRoute) {
      completions.push(route);
      const answer = answers.shift() ?? completion('fresh');
      if (answer instanceof Error) throw answer;
      return answer;
    },
    stream(route: CompletionRoute) {
      completions.push(route);
      const script = streams.shift() ?? chunkAnswer(['Hel', 'lo']).chunks;
      return (async function* (): AsyncIterable<StreamItem> {
        if (script instanceof Error) throw script;
        for (const [index, chunk] of script.entries())
          yield { chunk, ...(index === 0 && { provider: 'openai' }) };
      })();
    },
    async embed(route: EmbeddingsRoute) {
      embeddings.push(route);
      const vector = vectors.get(String(route.input));
      if (!vector) throw new GatewayError({ type: 'upstream_error', message: 'no vector for this text' });
      return {
        provider: 'embedder',
        response: {
          object: 'list' as const,
          data: [{ object: 'embedding' as const, index: 0, embedding: vector }],
          model: 'embed-small',
          usage: EMBEDDING_USAGE,
          extra_fields: { provider: 'embedder', model_params: {}, latency: 0 },
        },
      };
    },
  } as Pick<RouterService, 'complete' | 'stream' | 'embed'> as RouterService;
  const admission: Admission = {
    async authorize(request: { virtualKey?: string }) {
      return {
        targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
        ...(request.virtualKey && { virtualKeyId: request.virtualKey.slice('sk-gw-'.length) }),
        settlement: {
          reservationId: 'r',
          virtualKeyId: 'vk',
          counters: [],
          providerCounters: {},
          alternativeProviders: ['openai'],
          estimate: { model: 'm', provider: 'openai', usage: USAGE },
        },
      };
    },
    async settle(request: SettleRequest) {
      settles.push(request);
      return { cost: 0 };
    },
  };
  const config = parseGatewayConfig({
    cache: { enabled: true, embedding: { model: 'embedder/embed-small' }, ...cacheSection },
  }).cache;
  const backend = new MemoryCacheBackend({ now: () => clock.now });
  const cache = new SemanticCache({ backend, now: () => clock.now, defaultTtlMs: config.ttl_ms });
  const logger = createLogger({ service: 'test', level: 'silent' });
  const metrics = createMetrics({ service: 'test', defaultMetrics: false });
  const settler = createSettler({ admission, logger });
  const stage = cacheStage({ cache, config: fixed(config), router, metrics, logger });
  const pipeline = createPipeline({ admission, router, settler, stages: [settleStage(settler), stage] });
  const stores = async () =>
    (await metrics.cacheStores.get()).values.reduce((sum, { value }) => sum + value, 0);

  /**
   * Runs a chat as the virtual key `sk-gw-tester` unless the headers name another or `anonymous` says none;
   * answers the result with the headers the stage set.
   */
  async function chat(
    messages: Message[],
    options: { headers?: Record<string, string>; params?: object; anonymous?: boolean } = {},
  ) {
    const answerHeaders: Record<string, string> = {};
    const call: PipelineCall = {
      requestId: `req-${Math.random()}`,
      headers: { ...(!options.anonymous && { 'x-gw-vk': 'sk-gw-tester' }), ...options.headers },
      signal: new AbortController().signal,
      answerHeaders: {
        headersSent: false,
        setHeader(name, value) {
          answerHeaders[name] = value;
        },
      },
      parsed: {
        operation: 'chat',
        target: { provider: 'openai', model: 'gpt-4o-mini' },
        fallbacks: [],
        messages,
        params: { ...options.params },
        stream: false,
      },
    };
    return { call, answerHeaders };
  }
  async function complete(messages: Message[], options: Parameters<typeof chat>[1] = {}) {
    const { call, answerHeaders } = await chat(messages, options);
    const result = await pipeline.complete(call);
    return { result, headers: answerHeaders };
  }
  /** Streams a chat; `readOnly` items are read, then the reader goes away (as a client that hangs up). */
  async function stream(
    messages: Message[],
    options: Parameters<typeof chat>[1] & { readOnly?: number } = {},
  ) {
    const { call, answerHeaders } = await chat(messages, options);
    const items: StreamItem[] = [];
    for await (const item of await pipeline.stream({ ...call, parsed: { ...call.parsed, stream: true } })) {
      items.push(item);
      if (items.length === options.readOnly) break;
    }
    return { items, headers: answerHeaders };
  }
  /** Waits until `count` answers were offered to the cache (stores happen after the answer). */
  const stored = (count: number) =>
    waitFor(async () => (await stores()) >= count, { what: `${count} stores` });
  return {
    clock,
    completions,
    embeddings,
    settles,
    vectors,
    answers,
    streams,
    complete,
    stream,
    stored,
    metrics,
  };
}
