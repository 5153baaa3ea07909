// `pnpm bench:cache-affinity`: what the cache_affinity routing strategy (docs/routing.md "Strategies") saves on
// a multi-turn workload against a provider's own prompt cache. One embedded gateway (in this process, loopback
// only) routes to one OpenAI fake that emulates OpenAI's prompt cache per API key (testkit fake-prompt-cache.ts:
// prefixes of 1024 tokens or more, reported in steps of 128), with four provider keys of equal weight. Two
// virtual keys differ only in `routing_strategy`: `weighted` and `cache_affinity`. Each runs the same workload:
// BENCH_AFFINITY_CONVERSATIONS (40) conversations of BENCH_AFFINITY_TURNS (8) turns, each conversation with its
// own system prompt of about BENCH_AFFINITY_SYSTEM_TOKENS (6000) tokens, each turn sending the whole history (the
// previous answers included) and a new user message; BENCH_AFFINITY_CONCURRENCY (8) conversations at a time.
// Prints per strategy: requests, prompt tokens, cached tokens and their share (from the answers' usage), the
// provider keys a conversation met, and the cost governance charged (the request logs' sum, /api/logs/stats),
// priced with `cached_input` a quarter of `input`. A request that fails ends the run with code 1.
import type { LogStatsBucket } from '@gw/logs';
import { chatChoiceSchema, completionResponseSchema } from '@gw/shared';
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';

const intEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name}: '${process.env[name]}' is not an integer >= 1`);
  return value;
};
const params = {
  conversations: intEnv('BENCH_AFFINITY_CONVERSATIONS', 40),
  turns: intEnv('BENCH_AFFINITY_TURNS', 8),
  systemTokens: intEnv('BENCH_AFFINITY_SYSTEM_TOKENS', 6_000),
  concurrency: intEnv('BENCH_AFFINITY_CONCURRENCY', 8),
};

const STRATEGIES = ['weighted', 'cache_affinity'] as const;
type Strategy = (typeof STRATEGIES)[number];

const ADMIN_TOKEN = 'bench-cache-affinity-admin';
const MODEL = 'gpt-4.1';
/** USD per million tokens: OpenAI's list prices of gpt-4.1, cached input at a quarter of input. */
const PRICE = { input: 2, output: 8, cached_input: 0.5 };
const PROVIDER_KEYS = 4;
const virtualKey = (strategy: Strategy) => `sk-gw-bench-${strategy.replace('_', '-')}`.padEnd(46, '0');

function config(upstreamUrl: string): GatewayConfigInput {
  return {
    providers: {
      openai: {
        keys: Array.from({ length: PROVIDER_KEYS }, (_, index) => ({
          id: `key-${index + 1}`,
          value: `sk-upstream-${index + 1}`,
          weight: 1,
        })),
        network_config: { base_url: upstreamUrl, max_retries: 0 },
      },
    },
    governance: {
      virtual_keys: STRATEGIES.map((strategy) => ({
        id: `vk-${strategy}`,
        name: strategy,
        value: virtualKey(strategy),
        routing_strategy: strategy,
        log_content: false,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
      })),
      pricing: { [MODEL]: PRICE },
    },
    logs: { content: false },
  };
}

/** Words of a system prompt; its conversation's label comes first, so no two conversations share a prefix. */
const WORDS = ['policy', 'customer', 'account', 'refund', 'escalate', 'verify', 'summarize', 'politely'];
function systemPrompt(label: string): string {
  const words = [`You are the support agent of ${label}.`];
  // The fakes count a token per 4 characters of a message's JSON.
  for (let index = 0; words.join(' ').length < params.systemTokens * 4; index++) {
    words.push(`Rule ${index}: ${WORDS[index % WORDS.length]} ${WORDS[(index * 5 + 3) % WORDS.length]}.`);
  }
  return words.join(' ');
}

interface Totals {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

async function converse(options: {
  gateway: LaunchedGateway;
  strategy: Strategy;
  conversation: number;
  totals: Totals;
}): Promise<void> {
  const { gateway, strategy, conversation, totals } = options;
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: systemPrompt(`${strategy} conversation ${conversation}`) },
  ];
  for (let turn = 1; turn <= params.turns; turn++) {
    messages.push({
      role: 'user',
      content: `Turn ${turn} of conversation ${conversation}: my order ${conversation * 100 + turn} has not arrived; what now?`,
    });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${virtualKey(strategy)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, max_tokens: 64 }),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${strategy}: ${response.status} ${text.slice(0, 300)}`);
    const answer = completionResponseSchema.parse(JSON.parse(text));
    const choice = chatChoiceSchema.parse(answer.choices[0]);
    messages.push({ role: 'assistant', content: choice.message.content ?? '' });
    totals.requests++;
    totals.promptTokens += answer.usage.prompt_tokens;
    totals.cachedTokens += answer.usage.prompt_tokens_details?.cached_tokens ?? 0;
    totals.completionTokens += answer.usage.completion_tokens;
  }
}

/** Runs every conversation of one strategy, `concurrency` at a time. */
async function workload(gateway: LaunchedGateway, strategy: Strategy): Promise<Totals> {
  const totals: Totals = { requests: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  let next = 0;
  const worker = async () => {
    while (next < params.conversations) {
      const conversation = next++;
      await converse({ gateway, strategy, conversation, totals });
    }
  };
  await Promise.all(Array.from({ length: params.concurrency }, worker));
  return totals;
}

/** The cost governance charged the virtual key's requests, once the log writer has stored all of them. */
async function chargedCost(gateway: LaunchedGateway, strategy: Strategy, requests: number): Promise<number> {
  const stats = await waitFor(
    async () => {
      const response = await fetch(
        `${gateway.adminUrl}/api/logs/stats?virtual_key_id=vk-${strategy}&bucket_ms=${31 * 24 * 3_600_000}`,
        { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
      if (response.status !== 200) throw new Error(`/api/logs/stats: ${response.status}`);
      const { buckets } = (await response.json()) as { buckets: LogStatsBucket[] };
      const count = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
      return count === requests ? buckets : undefined;
    },
    { timeoutMs: 30_000, what: `the ${requests} log records of vk-${strategy}` },
  );
  return stats.reduce((sum, bucket) => sum + bucket.cost, 0);
}

/** How many provider keys each conversation met, on average (from what the fake received). */
function keysPerConversation(
  requests: ReadonlyArray<{ headers: Record<string, unknown>; body: unknown }>,
  strategy: Strategy,
): number {
  const keys = new Map<string, Set<string>>();
  const label = new RegExp(`^You are the support agent of ${strategy} conversation (\\d+)\\.`);
  for (const request of requests) {
    const system = (request.body as { messages?: Array<{ content?: unknown }> }).messages?.[0]?.content;
    const conversation = typeof system === 'string' ? label.exec(system)?.[1] : undefined;
    if (conversation === undefined) continue;
    const met = keys.get(conversation) ?? new Set<string>();
    met.add(String(request.headers['authorization']));
    keys.set(conversation, met);
  }
  const sizes = [...keys.values()].map((met) => met.size);
  return sizes.reduce((sum, size) => sum + size, 0) / Math.max(1, sizes.length);
}

const fake = await startFakeOpenAi({ promptCache: true });
const gateway = await startEmbedded({ config: config(fake.url), adminToken: ADMIN_TOKEN });
const started = performance.now();
try {
  console.log(
    `${params.conversations} conversations x ${params.turns} turns, ~${params.systemTokens}-token system prompt each, ` +
      `${PROVIDER_KEYS} provider keys of equal weight, ${MODEL} at $${PRICE.input}/$${PRICE.cached_input} per M input/cached tokens`,
  );
  const rows = [];
  for (const strategy of STRATEGIES) {
    const totals = await workload(gateway, strategy);
    const cost = await chargedCost(gateway, strategy, totals.requests);
    rows.push({ strategy, totals, cost, keys: keysPerConversation(fake.requests, strategy) });
  }
  const baseline = rows[0]!.cost;
  console.log(
    `\n${'strategy'.padEnd(16)}${'requests'.padStart(10)}${'prompt tok'.padStart(13)}${'cached tok'.padStart(13)}` +
      `${'cached'.padStart(9)}${'keys/conv'.padStart(11)}${'cost USD'.padStart(12)}${'saving'.padStart(9)}`,
  );
  for (const { strategy, totals, cost, keys } of rows) {
    const share = totals.cachedTokens / totals.promptTokens;
    const saving = baseline > 0 ? 1 - cost / baseline : 0;
    console.log(
      `${strategy.padEnd(16)}${String(totals.requests).padStart(10)}${String(totals.promptTokens).padStart(13)}` +
        `${String(totals.cachedTokens).padStart(13)}${`${(share * 100).toFixed(1)}%`.padStart(9)}` +
        `${keys.toFixed(2).padStart(11)}${cost.toFixed(4).padStart(12)}${`${(saving * 100).toFixed(1)}%`.padStart(9)}`,
    );
  }
  console.log(
    `\ncost: what governance charged (sum of the request logs' cost); saving: against weighted. ` +
      `(${((performance.now() - started) / 1_000).toFixed(1)} s)`,
  );
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await gateway.close();
  await fake.close();
}
