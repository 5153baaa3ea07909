import { z } from 'zod';

/** Most price overrides kept: each one is read by every admission, and the catalog of models is not larger. */
const MAX_PRICE_OVERRIDES = 10_000;

/**
 * A model name as prices are kept under it (a config key, an admin path segment): the name a provider answers
 * (`gpt-4o`, `claude-3-5-sonnet-20241022`, `meta-llama/llama-3.1-8b`), no control characters, bounded.
 */
export const pricedModelNameSchema = z
  .string()
  .min(1)
  .max(256)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  .refine((name) => !/[\u0000-\u001f\u007f]/.test(name), { error: 'must not hold control characters' })
  .refine((name) => name.trim() === name, { error: 'must not begin or end with spaces' });

const usdPerMillion = z.number().nonnegative().max(1_000_000);

/** What each kind of token costs, USD per million tokens: a model's prices, and those of its long-context tier. */
const tokenPricesShape = {
  input: usdPerMillion,
  output: usdPerMillion,
  /** Prompt tokens served from the provider's prompt cache; the input price when absent. */
  cached_input: usdPerMillion.optional(),
  /** Prompt tokens written to the provider's prompt cache (Anthropic, Bedrock); the input price when absent. */
  cache_write_input: usdPerMillion.optional(),
  /** Prompt tokens written to the prompt cache for an hour (Anthropic); the cache-write price when absent. */
  cache_write_1h_input: usdPerMillion.optional(),
  /** Audio prompt tokens (OpenAI `prompt_tokens_details.audio_tokens`); the input price when absent. */
  audio_input: usdPerMillion.optional(),
  /** Audio completion tokens (OpenAI `completion_tokens_details.audio_tokens`); the output price when absent. */
  audio_output: usdPerMillion.optional(),
  /** Image prompt tokens (`prompt_tokens_details.image_tokens`); the input price when absent. */
  image_input: usdPerMillion.optional(),
  /** Image completion tokens (`completion_tokens_details.image_tokens`); the output price when absent. */
  image_output: usdPerMillion.optional(),
};

const usdPerUnit = z.number().nonnegative().max(1_000);

/**
 * Prices per call and per unit beside tokens, in US dollars (not per million): a model billed by the request,
 * the image, the second of audio or the character (`Usage.units`). Each absent one is free.
 */
const unitPricesShape = {
  /** Every call that was answered (a search, a rerank, a flat-priced model). */
  per_request: usdPerUnit.optional(),
  /** Each image made (`units.images`: DALL·E, Imagen), whatever its tokens. */
  per_image: usdPerUnit.optional(),
  /** Each second of audio transcribed or translated (`units.audio_seconds`: whisper-1). */
  per_audio_second: usdPerUnit.optional(),
  /** Each million characters spoken (`units.characters`: tts-1), as OpenAI lists it. */
  per_million_characters: usdPerMillion.optional(),
};

/**
 * The prices of a request whose prompt is longer than `tokens` (Gemini 2.5 Pro above 200k prompt tokens, Claude
 * Sonnet 4 with the 1M context): such a request is priced wholly at these, as Google and Anthropic bill it. A
 * price the tier leaves out falls back within the tier (its cached input to its input), not to the base price.
 */
export const priceTierSchema = z.strictObject({
  /** The prompt tokens (cache reads and writes included) above which the tier applies. */
  tokens: z.number().int().positive(),
  ...tokenPricesShape,
});

/**
 * The prices of a call made through a provider's batch API (OpenAI's and Anthropic's batches bill half the list
 * price): the model's own prices when absent. A price the batch leaves out falls back within it.
 */
export const batchPricesSchema = z.strictObject({ ...tokenPricesShape });

/** A model's price: USD per million tokens, and per unit for what is billed beside tokens. */
export const modelPriceSchema = z.strictObject({
  ...tokenPricesShape,
  ...unitPricesShape,
  /** Tokens the model takes in one request (prompt and completion): routing skips it for larger ones. */
  context_window: z.number().int().positive().optional(),
  /** Prices of a request whose prompt tokens exceed `above.tokens` (one tier, as providers list them). */
  above: priceTierSchema.optional(),
  /** Prices of the calls of a batch (`/v1/batches`), charged when the batch's usage is read. */
  batch: batchPricesSchema.optional(),
});

/** USD per million tokens of each kind a provider bills. */
export type ModelPrice = z.infer<typeof modelPriceSchema>;

/** The prices of a long-context tier (`ModelPrice.above`). */
export type PriceTier = z.infer<typeof priceTierSchema>;

/** The prices of a batch's calls (`ModelPrice.batch`). */
export type BatchPrices = z.infer<typeof batchPricesSchema>;

/** The unpriced default (`governance.settings.unpriced_model_price`): USD per million tokens. */
export const unpricedModelPriceSchema = z.strictObject({
  input: z.number().nonnegative().max(1_000_000),
  output: z.number().nonnegative().max(1_000_000),
});

/**
 * Price overrides per model (`governance.pricing`, `/api/pricing/models/{model}`): they replace a built-in price
 * of the same name, or price a model the catalog does not know. Dated and versioned names resolve to them. A
 * name `provider/model` (`azure/gpt-4o`) prices the model only when that provider serves it, above `gpt-4o`.
 */
export const priceOverridesSchema = z
  .record(pricedModelNameSchema, modelPriceSchema)
  .refine((overrides) => Object.keys(overrides).length <= MAX_PRICE_OVERRIDES, {
    error: `at most ${MAX_PRICE_OVERRIDES} models`,
  });

export type PriceOverrides = z.infer<typeof priceOverridesSchema>;
