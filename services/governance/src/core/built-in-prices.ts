import { type BatchPrices, batchPricesSchema, type ModelPrice, type PriceTier } from '@gw/shared';

/** A provider's list prices as gw ships them, with where they were read and when. */
export interface PriceList {
  /** The provider whose page the prices come from (its models may be served by others: Azure, Vertex). */
  provider: string;
  /** The provider's pricing page. */
  source: string;
  /** The day the list was last checked in this repository (YYYY-MM-DD). */
  as_of: string;
  prices: Readonly<Record<string, ModelPrice>>;
}

/**
 * Claude Sonnet 4 and 4.5 with the 1M-token context (beta `context-1m-2025-08-07`): a request of more than 200k
 * input tokens, cache reads and writes included, is billed wholly at 2 × input and 1.5 × output, and the prompt
 * cache multipliers apply on top (reads 0.1 ×, 5-minute writes 1.25 ×, 1-hour writes 2 × the long input price).
 * Checked 2026-12-02 against Anthropic's "Long context pricing" as pages quoting it give it ($6 / $22.50 per
 * MTok above 200K; the multipliers stack); Anthropic's own page was not reachable from here.
 */
const SONNET_4_LONG_CONTEXT: PriceTier = {
  tokens: 200_000,
  input: 6,
  output: 22.5,
  cached_input: 0.6,
  cache_write_input: 7.5,
  cache_write_1h_input: 12,
};

/** Every price of a kind of token (what a batch bills at its own price), as the batch schema names them. */
const TOKEN_PRICE_FIELDS = batchPricesSchema.keyof().options;

/**
 * The models of a list with their batch prices: half of each of their token prices, as OpenAI's Batch API and
 * Anthropic's Message Batches API bill every kind of token, cache reads and writes included ("50% of standard
 * prices": checked 2026-12-02 against Anthropic's batch-processing page and pages quoting OpenAI's, whose own
 * page was not reachable from here). Generated from the list price, so a price changed here changes its batch
 * price with it.
 */
function withBatchPrices(prices: Record<string, ModelPrice>): Record<string, ModelPrice> {
  return Object.fromEntries(
    Object.entries(prices).map(([model, price]) => {
      const batch: BatchPrices = { input: price.input / 2, output: price.output / 2 };
      for (const field of TOKEN_PRICE_FIELDS) {
        const listed = price[field];
        if (listed !== undefined) batch[field] = listed / 2;
      }
      return [model, { ...price, batch }];
    }),
  );
}

/**
 * Built-in list prices (USD per million tokens) of the models of the eleven providers, by their base names, one
 * list per provider with where it was read; dated, versioned and region-prefixed names resolve to them
 * (`modelNameCandidates`). Overrides (`governance.pricing`, `/api/pricing`) replace or extend them without a
 * release. Self-hosted models (Ollama, SGLang) have no list price: set theirs as an override, or the unpriced
 * default (`governance.settings.unpriced_model_price`).
 *
 * `as_of` is the day a list was last checked in this repository (its git history: the catalog was written on
 * 2026-11-23), not a promise that the provider's page still says so: an operator who finds a price changed
 * overrides it. The chat models of OpenAI and Anthropic carry their batch prices (`withBatchPrices`).
 */
export const PRICE_LISTS: readonly PriceList[] = [
  {
    // OpenAI (and Azure OpenAI deployments of the same models)
    provider: 'openai',
    source: 'OpenAI API pricing, https://openai.com/api/pricing',
    as_of: '2026-11-23',
    prices: {
      ...withBatchPrices({
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
      }),
      'text-embedding-3-small': { input: 0.02, output: 0 },
      'text-embedding-3-large': { input: 0.13, output: 0 },
      'text-embedding-ada-002': { input: 0.1, output: 0 },
      // Images, speech and transcription, added 2026-12-02 from the figures of OpenAI's pricing page as pages
      // quoting it give them (OpenAI's own page was not reachable from here). gpt-image-1 bills tokens: text in
      // $5, cached $1.25, image in $10, image out $40 (its output is images). DALL·E bills per image: the price
      // of a standard 1024×1024 one (DALL·E 3's HD and larger sizes cost $0.08 to $0.12: an operator whose calls
      // make those raises the price with an override). Whisper bills $0.006 a minute of audio, TTS $15 (HD $30) a million
      // characters.
      'gpt-image-1': { input: 5, output: 40, cached_input: 1.25, image_input: 10, image_output: 40 },
      'dall-e-3': { input: 0, output: 0, per_image: 0.04 },
      'dall-e-2': { input: 0, output: 0, per_image: 0.02 },
      'whisper-1': { input: 0, output: 0, per_audio_second: 0.0001 },
      'tts-1': { input: 0, output: 0, per_million_characters: 15 },
      'tts-1-hd': { input: 0, output: 0, per_million_characters: 30 },
    },
  },
  {
    // Anthropic (also on Bedrock and Vertex): cache writes at 1.25 × input for 5 minutes, 2 × input for an hour.
    provider: 'anthropic',
    source: 'Anthropic API pricing, https://www.anthropic.com/pricing#api',
    as_of: '2026-11-23',
    prices: withBatchPrices({
      'claude-opus-4-1': {
        input: 15,
        output: 75,
        cached_input: 1.5,
        cache_write_input: 18.75,
        cache_write_1h_input: 30,
      },
      'claude-opus-4': {
        input: 15,
        output: 75,
        cached_input: 1.5,
        cache_write_input: 18.75,
        cache_write_1h_input: 30,
      },
      'claude-sonnet-4-5': {
        input: 3,
        output: 15,
        cached_input: 0.3,
        cache_write_input: 3.75,
        cache_write_1h_input: 6,
        above: SONNET_4_LONG_CONTEXT,
      },
      'claude-sonnet-4': {
        input: 3,
        output: 15,
        cached_input: 0.3,
        cache_write_input: 3.75,
        cache_write_1h_input: 6,
        above: SONNET_4_LONG_CONTEXT,
      },
      'claude-haiku-4-5': {
        input: 1,
        output: 5,
        cached_input: 0.1,
        cache_write_input: 1.25,
        cache_write_1h_input: 2,
      },
      'claude-3-7-sonnet': {
        input: 3,
        output: 15,
        cached_input: 0.3,
        cache_write_input: 3.75,
        cache_write_1h_input: 6,
      },
      'claude-3-5-sonnet': {
        input: 3,
        output: 15,
        cached_input: 0.3,
        cache_write_input: 3.75,
        cache_write_1h_input: 6,
      },
      'claude-3-5-haiku': {
        input: 0.8,
        output: 4,
        cached_input: 0.08,
        cache_write_input: 1,
        cache_write_1h_input: 1.6,
      },
      'claude-3-opus': {
        input: 15,
        output: 75,
        cached_input: 1.5,
        cache_write_input: 18.75,
        cache_write_1h_input: 30,
      },
      'claude-3-sonnet': { input: 3, output: 15 },
      'claude-3-haiku': {
        input: 0.25,
        output: 1.25,
        cached_input: 0.03,
        cache_write_input: 0.3,
        cache_write_1h_input: 0.5,
      },
    }),
  },
  {
    // Google Gemini (AI Studio and Vertex). Gemini 2.5 Pro bills a prompt of more than 200k tokens (cached
    // content included) wholly at its long-context prices: $2.50 in, $15 out, $0.625 cached. Checked 2026-12-02
    // against the gemini-cost crate's tables and tests (docs.rs, which cite ai.google.dev/gemini-api/docs/pricing:
    // the whole prompt at $2.50 above 200k); Google's page itself was not reachable from here.
    provider: 'gemini',
    source: 'Gemini API pricing, https://ai.google.dev/gemini-api/docs/pricing',
    as_of: '2026-11-23',
    prices: {
      'gemini-2.5-pro': {
        input: 1.25,
        output: 10,
        cached_input: 0.31,
        above: { tokens: 200_000, input: 2.5, output: 15, cached_input: 0.625 },
      },
      'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
      'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cached_input: 0.025 },
      'gemini-2.0-flash': { input: 0.1, output: 0.4, cached_input: 0.025 },
      'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
      'gemini-1.5-pro': { input: 1.25, output: 5 },
      'gemini-1.5-flash': { input: 0.075, output: 0.3 },
      'gemini-1.5-flash-8b': { input: 0.0375, output: 0.15 },
      'text-embedding-004': { input: 0.025, output: 0 },
      'gemini-embedding-001': { input: 0.15, output: 0 },
    },
  },
  {
    // Mistral
    provider: 'mistral',
    source: 'Mistral AI pricing, https://mistral.ai/pricing',
    as_of: '2026-11-23',
    prices: {
      'mistral-large': { input: 2, output: 6 },
      'mistral-medium': { input: 0.4, output: 2 },
      'mistral-small': { input: 0.1, output: 0.3 },
      'ministral-8b': { input: 0.1, output: 0.1 },
      'ministral-3b': { input: 0.04, output: 0.04 },
      codestral: { input: 0.3, output: 0.9 },
      'open-mistral-nemo': { input: 0.15, output: 0.15 },
      'pixtral-large': { input: 2, output: 6 },
      'mistral-embed': { input: 0.1, output: 0 },
    },
  },
  {
    // Cohere
    provider: 'cohere',
    source: 'Cohere pricing, https://cohere.com/pricing',
    as_of: '2026-11-23',
    prices: {
      'command-a': { input: 2.5, output: 10 },
      'command-r-plus': { input: 2.5, output: 10 },
      'command-r': { input: 0.15, output: 0.6 },
      'command-r7b': { input: 0.0375, output: 0.15 },
      'embed-english-v3.0': { input: 0.1, output: 0 },
      'embed-multilingual-v3.0': { input: 0.1, output: 0 },
      'embed-v4.0': { input: 0.12, output: 0 },
    },
  },
  {
    // Groq
    provider: 'groq',
    source: 'GroqCloud pricing, https://groq.com/pricing',
    as_of: '2026-11-23',
    prices: {
      'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
      'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
      'llama3-70b-8192': { input: 0.59, output: 0.79 },
      'llama3-8b-8192': { input: 0.05, output: 0.08 },
      'gemma2-9b-it': { input: 0.2, output: 0.2 },
      'mixtral-8x7b-32768': { input: 0.24, output: 0.24 },
      'deepseek-r1-distill-llama-70b': { input: 0.75, output: 0.99 },
      'qwen-qwq-32b': { input: 0.29, output: 0.39 },
    },
  },
  {
    // Bedrock's own models
    provider: 'bedrock',
    source: 'Amazon Bedrock pricing, https://aws.amazon.com/bedrock/pricing',
    as_of: '2026-11-23',
    prices: {
      'nova-pro': { input: 0.8, output: 3.2 },
      'nova-lite': { input: 0.06, output: 0.24 },
      'nova-micro': { input: 0.035, output: 0.14 },
      'titan-embed-text': { input: 0.02, output: 0 },
      'llama3-1-70b-instruct': { input: 0.72, output: 0.72 },
      'llama3-1-8b-instruct': { input: 0.22, output: 0.22 },
    },
  },
];
