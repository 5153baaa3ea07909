// The shared context of the cache suite (semantic-cache.test.ts): the gateway with the cache on, its fake chat
// and embeddings upstreams, the virtual keys, and helpers that tell a hit from a miss by what reached the
// upstream.
import {
  type FakeEmbeddings,
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  waitFor,
} from '@gw/testkit';
import { get, post } from '../support/http.ts';

export const ADMIN = { authorization: 'Bearer cache-admin' };

/** One virtual key per area, so no case finds another's entries: `vk:<id>` is each one's scope. */
export const KEYS = {
  alice: { id: 'vk-alice', value: 'sk-gw-alice00000000000000000000000000000000000' },
  bob: { id: 'vk-bob', value: 'sk-gw-bob0000000000000000000000000000000000000' },
  carol: { id: 'vk-carol', value: 'sk-gw-carol00000000000000000000000000000000000' },
  dave: { id: 'vk-dave', value: 'sk-gw-dave000000000000000000000000000000000000' },
  erin: { id: 'vk-erin', value: 'sk-gw-erin000000000000000000000000000000000000' },
} as const;

export interface CacheFakes {
  chat: FakeOpenAi;
  embeddings: FakeEmbeddings;
}

/** What a case reads at run time (filled in by the suite's beforeAll). */
export interface CacheContext {
  readonly fakes: CacheFakes;
  readonly gateway: LaunchedGateway;
  /** The ingress a hit is asked from: the second replica in cluster mode, the only one embedded. */
  readonly reader: string;
}

export function cacheConfig(fakes: CacheFakes): GatewayConfigInput {
  const network = (url: string) => ({ base_url: url, max_retries: 0 });
  return {
    // Callers without a key are served (uncached: match-cases.ts), so the anonymous scope can be attacked.
    client: { enforce_virtual_keys: false },
    providers: {
      openai: { keys: [{ value: 'sk-chat' }], network_config: network(fakes.chat.url) },
      embedder: {
        keys: [{ value: 'sk-embed' }],
        network_config: network(fakes.embeddings.url),
        custom_provider_config: { base_provider: 'openai' },
      },
    },
    governance: {
      // A chat answer of the fake (18 tokens) costs $0.018, an embedding (4 tokens) $0.004.
      pricing: {
        'gpt-4o-mini': { input: 1000, output: 1000 },
        'embed-small': { input: 1000, output: 0 },
      },
      virtual_keys: Object.values(KEYS).map((key) => ({
        ...key,
        name: key.id,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        ...(key.id === KEYS.carol.id && { budgets: [{ max_limit: 10, reset_duration: '1d' }] }),
      })),
    },
    cache: { enabled: true, embedding: { model: 'embedder/embed-small' } },
  };
}

export const ask = (content: string) => ({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content }],
});

export function helpers(context: CacheContext) {
  const chat = (
    base: string,
    key: { value: string },
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) => post(`${base}/v1/chat/completions`, body, { headers: { 'x-gw-vk': key.value, ...headers } });

  /** Stored entries counted by every ingress (`gw_cache_stores_total{outcome="stored"}`). */
  async function storedCount(): Promise<number> {
    let total = 0;
    for (const url of context.gateway.urls) {
      const text = String((await get(`${url}/metrics`)).body);
      const line = text.split('\n').find((row) => row.startsWith('gw_cache_stores_total{outcome="stored"'));
      total += line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    }
    return total;
  }

  /** Runs `send` and waits until the answer it caused has been stored (stores happen after the answer). */
  async function andStored<T>(send: () => Promise<T>): Promise<T> {
    const before = await storedCount();
    const answer = await send();
    await waitFor(async () => (await storedCount()) > before, { what: 'the answer to be stored' });
    return answer;
  }

  /**
   * Runs `send` until a run reaches no chat upstream (a hit): another replica learns of a write through a
   * notice that may land a moment after the writer counted it. Answers that run.
   */
  async function asHit<T>(send: () => Promise<T>): Promise<T> {
    return waitFor(
      async () => {
        const before = context.fakes.chat.requests.length;
        const answer = await send();
        return context.fakes.chat.requests.length === before ? { answer } : undefined;
      },
      { timeoutMs: 1_000, what: 'a run of the request answered from the cache' },
    ).then(({ answer }) => answer);
  }

  return { chat, andStored, asHit, storedCount };
}
