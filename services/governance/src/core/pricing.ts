import type { Usage } from '@gw/shared';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number | undefined;
}

/**
 * Built-in list prices (USD per million tokens) of common models; `governance.pricing` in the config
 * overrides or extends them. A model missing here costs nothing (and budgets do not move for it).
 */
const DEFAULT_PRICES: Record<string, ModelPrice> = {
  'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cached_input: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cached_input: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cached_input: 0.025 },
  o3: { input: 2, output: 8, cached_input: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cached_input: 0.275 },
  'gpt-3.5-turbo-instruct': { input: 1.5, output: 2 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
  'claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3 },
  'claude-opus-4-1': { input: 15, output: 75, cached_input: 1.5 },
  'claude-haiku-4-5': { input: 1, output: 5, cached_input: 0.1 },
  'claude-3-5-haiku-latest': { input: 0.8, output: 4, cached_input: 0.08 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cached_input: 0.31 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cached_input: 0.025 },
  'mistral-large-latest': { input: 2, output: 6 },
  'mistral-small-latest': { input: 0.1, output: 0.3 },
  'command-r-plus': { input: 2.5, output: 10 },
  'command-r': { input: 0.15, output: 0.6 },
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
};

export class PriceCatalog {
  private readonly prices: Map<string, ModelPrice>;

  constructor(overrides: Record<string, ModelPrice> = {}) {
    this.prices = new Map(Object.entries({ ...DEFAULT_PRICES, ...overrides }));
  }

  /** A provider's model id may carry a region or version prefix (`us.anthropic.claude…`); try the bare tail too. */
  price(model: string): ModelPrice | undefined {
    return this.prices.get(model) ?? this.prices.get(model.slice(model.lastIndexOf('/') + 1));
  }

  /** Cost in micro-USD (integers: budgets are INCRBY counters). Price per million × tokens = micro-USD. */
  costMicros(model: string, usage: Usage): number {
    const price = this.price(model);
    if (!price) return 0;
    const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
    const uncached = usage.prompt_tokens - cached;
    return Math.ceil(
      uncached * price.input +
        cached * (price.cached_input ?? price.input) +
        usage.completion_tokens * price.output,
    );
  }

  /** The most a request can cost: every prompt token uncached and every allowed completion token used. */
  worstCaseMicros(model: string, promptTokens: number, maxCompletionTokens: number): number {
    const price = this.price(model);
    if (!price) return 0;
    return Math.ceil(promptTokens * price.input + maxCompletionTokens * price.output);
  }
}

export const MICROS_PER_USD = 1_000_000;
