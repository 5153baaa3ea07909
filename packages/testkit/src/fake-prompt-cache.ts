import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A provider's prompt cache as a fake emulates it (opt-in: `promptCache` on a fake), so a test or bench can see
 * what routing does to cache hits: OpenAI caches every prompt prefix of 1024 tokens or more automatically,
 * Anthropic reads a cached prefix the same way. The cache belongs to the API key that sent the request, as a
 * provider's belongs to an organisation: the same conversation sent with another key misses.
 */
export interface PromptCacheOptions {
  /** The shortest prefix cached, in tokens (both providers: 1024). */
  minimumTokens?: number;
  /** Prefixes remembered over all keys; the least recently used is forgotten first. */
  capacity?: number;
}

/** Options of the provider fakes (startFakeOpenAi, startFakeAnthropic). */
export interface FakeProviderOptions {
  /**
   * Emulates the provider's prompt cache per API key (FakePromptCache): usage then counts the prompt's
   * tokens and its cached prefix instead of the fixed figures the other tests assert.
   */
  promptCache?: boolean | PromptCacheOptions;
}

/** What a request's prompt counts: all its tokens, and those of its longest prefix found in the cache. */
export interface PromptCacheRead {
  promptTokens: number;
  cachedTokens: number;
}

/**
 * Prefixes are cut at block boundaries (a tool list, a system prompt, a message): a block's tokens are its JSON
 * text's length / 4, rounded up (the fakes' estimate of a prompt). A request reads its longest remembered prefix
 * of at least `minimumTokens`, then every prefix of that size of it is remembered, as a provider caches what it
 * served: the next turn of a conversation, which starts with this whole request, hits it.
 */
export class FakePromptCache {
  private readonly minimumTokens: number;
  private readonly capacity: number;
  /** Prefix hashes in least-recently-used order (a Map keeps insertion order). */
  private readonly prefixes = new Map<string, true>();

  constructor(options: PromptCacheOptions = {}) {
    this.minimumTokens = options.minimumTokens ?? 1024;
    this.capacity = options.capacity ?? 100_000;
  }

  read(apiKey: string, blocks: readonly unknown[]): PromptCacheRead {
    const hash = createHash('sha256').update(apiKey);
    const seen: string[] = [];
    let promptTokens = 0;
    let cachedTokens = 0;
    for (const block of blocks) {
      const text = JSON.stringify(block) ?? '';
      // A NUL never occurs in JSON text: it ends a block unambiguously.
      hash.update(`\u0000${text}`);
      promptTokens += Math.ceil(text.length / 4);
      if (promptTokens < this.minimumTokens) continue;
      const prefix = hash.copy().digest('base64');
      if (this.touch(prefix)) cachedTokens = promptTokens;
      seen.push(prefix);
    }
    for (const prefix of seen) this.remember(prefix);
    return { promptTokens, cachedTokens };
  }

  private touch(prefix: string): boolean {
    if (!this.prefixes.delete(prefix)) return false;
    this.prefixes.set(prefix, true);
    return true;
  }

  private remember(prefix: string): void {
    this.prefixes.delete(prefix);
    this.prefixes.set(prefix, true);
    if (this.prefixes.size <= this.capacity) return;
    const oldest = this.prefixes.keys().next();
    if (!oldest.done) this.prefixes.delete(oldest.value);
  }
}

/** `promptCache` of a fake's options: true for the providers' defaults. */
export function promptCacheOf(option: boolean | PromptCacheOptions | undefined): FakePromptCache | undefined {
  if (!option) return undefined;
  return new FakePromptCache(option === true ? {} : option);
}

/** The credential a request carried, whichever header a provider reads it from (the cache's owner). */
export function apiKeyOf(headers: IncomingHttpHeaders): string {
  const value = headers['authorization'] ?? headers['x-api-key'] ?? headers['api-key'] ?? '';
  return Array.isArray(value) ? value.join(',') : value;
}
