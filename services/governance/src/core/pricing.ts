import type { Usage } from '@gw/shared';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number | undefined;
  /** Tokens the model takes in one request: routing skips it for a larger prompt (docs/routing.md). */
  context_window?: number | undefined;
}

/**
 * Built-in list prices (USD per million tokens) of the models of the eleven providers, by their base names;
 * dated, versioned and region-prefixed names resolve to them (`modelNameCandidates`). `governance.pricing` in
 * the config overrides or extends them (a config change, no release). Self-hosted models (Ollama, SGLang)
 * have no list price: set theirs in `governance.pricing`, or `governance.settings.unpriced_model_price`.
 */
const DEFAULT_PRICES: Record<string, ModelPrice> = {
  // OpenAI (and Azure OpenAI deployments of the same models)
  'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 },
  'chatgpt-4o-latest': { input: 5, output: 15 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4': { input: 30, output: 60 },
  'gpt-4-32k': { input: 60, output: 120 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'gpt-3.5-turbo-instruct': { input: 1.5, output: 2 },
  'gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cached_input: 0.025 },
  'gpt-4.5-preview': { input: 75, output: 150, cached_input: 37.5 },
  'gpt-5': { input: 1.25, output: 10, cached_input: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cached_input: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cached_input: 0.005 },
  o1: { input: 15, output: 60, cached_input: 7.5 },
  'o1-mini': { input: 1.1, output: 4.4, cached_input: 0.55 },
  'o1-pro': { input: 150, output: 600 },
  o3: { input: 2, output: 8, cached_input: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cached_input: 0.55 },
  'o3-pro': { input: 20, output: 80 },
  'o4-mini': { input: 1.1, output: 4.4, cached_input: 0.275 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
  'text-embedding-ada-002': { input: 0.1, output: 0 },
  // Anthropic (also on Bedrock and Vertex)
  'claude-opus-4-1': { input: 15, output: 75, cached_input: 1.5 },
  'claude-opus-4': { input: 15, output: 75, cached_input: 1.5 },
  'claude-sonnet-4-5': { input: 3, output: 15, cached_input: 0.3 },
  'claude-sonnet-4': { input: 3, output: 15, cached_input: 0.3 },
  'claude-haiku-4-5': { input: 1, output: 5, cached_input: 0.1 },
  'claude-3-7-sonnet': { input: 3, output: 15, cached_input: 0.3 },
  'claude-3-5-sonnet': { input: 3, output: 15, cached_input: 0.3 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cached_input: 0.08 },
  'claude-3-opus': { input: 15, output: 75, cached_input: 1.5 },
  'claude-3-sonnet': { input: 3, output: 15 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cached_input: 0.03 },
  // Google Gemini (AI Studio and Vertex)
  'gemini-2.5-pro': { input: 1.25, output: 10, cached_input: 0.31 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cached_input: 0.025 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cached_input: 0.025 },
  'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
  'gemini-1.5-pro': { input: 1.25, output: 5 },
  'gemini-1.5-flash': { input: 0.075, output: 0.3 },
  'gemini-1.5-flash-8b': { input: 0.0375, output: 0.15 },
  'text-embedding-004': { input: 0.025, output: 0 },
  'gemini-embedding-001': { input: 0.15, output: 0 },
  // Mistral
  'mistral-large': { input: 2, output: 6 },
  'mistral-medium': { input: 0.4, output: 2 },
  'mistral-small': { input: 0.1, output: 0.3 },
  'ministral-8b': { input: 0.1, output: 0.1 },
  'ministral-3b': { input: 0.04, output: 0.04 },
  codestral: { input: 0.3, output: 0.9 },
  'open-mistral-nemo': { input: 0.15, output: 0.15 },
  'pixtral-large': { input: 2, output: 6 },
  'mistral-embed': { input: 0.1, output: 0 },
  // Cohere
  'command-a': { input: 2.5, output: 10 },
  'command-r-plus': { input: 2.5, output: 10 },
  'command-r': { input: 0.15, output: 0.6 },
  'command-r7b': { input: 0.0375, output: 0.15 },
  'embed-english-v3.0': { input: 0.1, output: 0 },
  'embed-multilingual-v3.0': { input: 0.1, output: 0 },
  'embed-v4.0': { input: 0.12, output: 0 },
  // Groq
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
  'llama3-70b-8192': { input: 0.59, output: 0.79 },
  'llama3-8b-8192': { input: 0.05, output: 0.08 },
  'gemma2-9b-it': { input: 0.2, output: 0.2 },
  'mixtral-8x7b-32768': { input: 0.24, output: 0.24 },
  'deepseek-r1-distill-llama-70b': { input: 0.75, output: 0.99 },
  'qwen-qwq-32b': { input: 0.29, output: 0.39 },
  // Bedrock's own models
  'nova-pro': { input: 0.8, output: 3.2 },
  'nova-lite': { input: 0.06, output: 0.24 },
  'nova-micro': { input: 0.035, output: 0.14 },
  'titan-embed-text': { input: 0.02, output: 0 },
  'llama3-1-70b-instruct': { input: 0.72, output: 0.72 },
  'llama3-1-8b-instruct': { input: 0.22, output: 0.22 },
};

/** Suffixes and prefixes a provider adds to a base model name: dates, versions, regions, vendors. */
const NAME_VARIANTS: RegExp[] = [
  /^(?:us|eu|apac|ap|global|us-gov)\./, // Bedrock cross-region inference profiles
  /^(?:anthropic|meta|mistral|cohere|amazon|ai21|deepseek)\./, // Bedrock vendor prefixes
  /-v\d+(?::\d+)?$/, // Bedrock versions (-v1:0, -v2)
  /@\d{8}$/, // Vertex dates (@20241022)
  /-\d{4}-\d{2}-\d{2}$/, // OpenAI dates (-2024-08-06)
  /-\d{8}$/, // Anthropic dates (-20241022)
  /-\d{4}$/, // Mistral dates (-2411), OpenAI (-0125)
  /-\d{3}$/, // Gemini versions (-002)
  /-(?:latest|preview(?:-[\w-]+)?|exp(?:-[\w-]+)?)$/,
];

/**
 * The names a model may be priced under, most specific first: as given, without the `provider/` prefix, then
 * with each variant part taken off in turn (`us.anthropic.claude-3-5-sonnet-20241022-v2:0` → … →
 * `claude-3-5-sonnet`, `gpt-4o-2024-08-06` → `gpt-4o`).
 */
export function modelNameCandidates(model: string): string[] {
  const candidates = [model];
  let name = model.slice(model.lastIndexOf('/') + 1);
  if (name !== model) candidates.push(name);
  for (const variant of NAME_VARIANTS) {
    const shorter = name.replace(variant, '');
    if (shorter !== name && shorter.length > 0) {
      name = shorter;
      candidates.push(name);
    }
  }
  return candidates;
}

/** Most resolved model names kept (names come from requests: bounded). */
const RESOLVED_LIMIT = 10_000;

export class PriceCatalog {
  private readonly prices: Map<string, ModelPrice>;
  /** `governance.settings.unpriced_model_price`: what a model without a price costs, when set. */
  private readonly unpriced: ModelPrice | undefined;
  private readonly resolved = new Map<string, ModelPrice | null>();

  private readonly random: () => number;

  constructor(
    overrides: Record<string, ModelPrice> = {},
    unpriced?: ModelPrice,
    /** Draws the rounding of sub-micro-dollar remainders (tests fix it). */
    random: () => number = Math.random,
  ) {
    this.prices = new Map(Object.entries({ ...DEFAULT_PRICES, ...overrides }));
    this.unpriced = unpriced;
    this.random = random;
  }

  /** The list price of a model under any of its names; undefined when it has none. */
  listPrice(model: string): ModelPrice | undefined {
    let price = this.resolved.get(model);
    if (price === undefined) {
      price = null;
      for (const name of modelNameCandidates(model)) {
        const found = this.prices.get(name);
        if (found) {
          price = found;
          break;
        }
      }
      if (this.resolved.size >= RESOLVED_LIMIT) this.resolved.clear();
      this.resolved.set(model, price);
    }
    return price ?? undefined;
  }

  /** The price charged for a model: its list price, else the configured price of unpriced models. */
  price(model: string): ModelPrice | undefined {
    return this.listPrice(model) ?? this.unpriced;
  }

  /**
   * Cost in micro-USD (integers: budgets are INCRBY counters). Price per million × tokens = micro-USD; a
   * fraction of a micro-dollar is rounded up with the probability of its size, so the charges of many
   * requests add up to their exact cost (always rounding up over-charged cheap calls by up to 2.6%).
   */
  costMicros(model: string, usage: Usage): number {
    const price = this.price(model);
    if (!price) return 0;
    const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
    const uncached = usage.prompt_tokens - cached;
    const exact =
      uncached * price.input +
      cached * (price.cached_input ?? price.input) +
      usage.completion_tokens * price.output;
    // Prices in decimal dollars make exact integers come out a hair off (0.15 × 1e6…): round those first.
    const whole = Math.round(exact);
    if (Math.abs(exact - whole) < 1e-6) return whole;
    const floor = Math.floor(exact);
    return floor + (this.random() < exact - floor ? 1 : 0);
  }

  /** The most a request can cost: every prompt token uncached and every allowed completion token used. */
  worstCaseMicros(model: string, promptTokens: number, maxCompletionTokens: number): number {
    const price = this.price(model);
    if (!price) return 0;
    return Math.ceil(promptTokens * price.input + maxCompletionTokens * price.output);
  }
}

export const MICROS_PER_USD = 1_000_000;
