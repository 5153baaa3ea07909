import type { ModelPrice, PriceTier, Usage } from '@gw/shared';
import type { CostBreakdown } from './governance-messages.ts';

/** The billed parts of a usage, in the order `CostMicros` names them. */
const BILLED_PARTS = [
  'input',
  'cached_input',
  'cache_write',
  'output',
  'audio',
  'image',
  'per_unit',
] as const;

type BilledPart = (typeof BILLED_PARTS)[number];

/**
 * What one call cost in micro-USD, by what the provider billed: uncached text input, input read from the prompt
 * cache, input written to it, text output, audio tokens in and out, image tokens in and out, and what is priced
 * per call and per unit (images made, seconds of audio, characters). The billed parts sum to `total` exactly;
 * `reasoning` is the part of `output` the model spent reasoning, shown apart and never added to it.
 */
export type CostMicros = Record<BilledPart | 'total' | 'reasoning', number>;

export const NO_COST: CostMicros = {
  total: 0,
  input: 0,
  cached_input: 0,
  cache_write: 0,
  output: 0,
  audio: 0,
  image: 0,
  per_unit: 0,
  reasoning: 0,
};

/** Two charges' parts added up, each part apart. */
export function addCosts(a: CostMicros, b: CostMicros): CostMicros {
  const sum = { ...NO_COST };
  for (const part of Object.keys(NO_COST) as Array<keyof CostMicros>) sum[part] = a[part] + b[part];
  return sum;
}

/** What each kind of token costs: a model's prices, or those of its long-context tier. */
export type TokenPrices = Omit<PriceTier, 'tokens'>;

/**
 * The prices a request is billed at: its model's long-context tier when its prompt (cache reads and writes
 * included) is longer than the tier's threshold, wholly, as Google and Anthropic bill it; else the model's own.
 */
export function pricesFor(price: ModelPrice, promptTokens: number): TokenPrices {
  return price.above && promptTokens > price.above.tokens ? price.above : price;
}

/**
 * The prices a usage is billed at: a batch's (`usage.batch`) at the model's batch prices, or its own when it
 * lists none; no long-context tier, since a batch's usage adds up the prompts of all its calls. Any other usage
 * at `pricesFor`.
 */
function usagePrices(price: ModelPrice, usage: Usage): TokenPrices {
  return usage.batch ? (price.batch ?? price) : pricesFor(price, usage.prompt_tokens);
}

/**
 * The most one token can be billed at under these prices: a prompt token as uncached or cached input, audio or
 * an image; a completion token as text, audio or an image. A reserve priced at less than these could be exceeded
 * by the bill of the same tokens. Cache writes are left out: a prompt is written to the cache only where the
 * request marks it (Anthropic's `cache_control`, Bedrock's `cachePoint`), and reserving every Claude prompt at
 * the hour's write price (twice the input) would refuse a key at half its budget; such a request's settle
 * charges its writes, above the reserve by at most the write premium of its prompt.
 */
export function dearestTokenPrices(prices: TokenPrices): { prompt: number; completion: number } {
  return {
    prompt: Math.max(
      prices.input,
      prices.cached_input ?? 0,
      prices.audio_input ?? 0,
      prices.image_input ?? 0,
    ),
    completion: Math.max(prices.output, prices.audio_output ?? 0, prices.image_output ?? 0),
  };
}

/**
 * Prices in decimal dollars make exact integers come out a hair off (0.15 × 1e6…): those are the integer they
 * meant, and any other amount is itself.
 */
function snapped(amount: number): number {
  const whole = Math.round(amount);
  return Math.abs(amount - whole) < 1e-6 ? whole : amount;
}

/**
 * The tokens of a usage by how they are billed. Cache reads, cache writes, audio and images are parts of
 * `prompt_tokens` (as the adapters map them), so they are taken out of the text input, each bounded by what is
 * left; audio, images and reasoning are parts of `completion_tokens`, so audio and images are taken out of the
 * text output, and reasoning is a part of that text output, priced once, as output.
 */
function billedTokens(usage: Usage) {
  const details = usage.prompt_tokens_details;
  const outDetails = usage.completion_tokens_details;
  const cached = Math.min(details?.cached_tokens ?? 0, usage.prompt_tokens);
  const written = Math.min(details?.cache_write_tokens ?? 0, usage.prompt_tokens - cached);
  const audioIn = Math.min(details?.audio_tokens ?? 0, usage.prompt_tokens - cached - written);
  const imageIn = Math.min(details?.image_tokens ?? 0, usage.prompt_tokens - cached - written - audioIn);
  const audioOut = Math.min(outDetails?.audio_tokens ?? 0, usage.completion_tokens);
  const imageOut = Math.min(outDetails?.image_tokens ?? 0, usage.completion_tokens - audioOut);
  const textOut = usage.completion_tokens - audioOut - imageOut;
  return {
    textIn: usage.prompt_tokens - cached - written - audioIn - imageIn,
    cached,
    written,
    writtenForAnHour: Math.min(details?.cache_write_1h_tokens ?? 0, written),
    audioIn,
    imageIn,
    textOut,
    audioOut,
    imageOut,
    reasoning: Math.min(outDetails?.reasoning_tokens ?? 0, textOut),
  };
}

/**
 * Whether a usage is that of a call that was answered: a settle of a call that failed, or was never sent,
 * carries an empty usage (no tokens, no units), and is charged no price per call.
 */
function answered(usage: Usage): boolean {
  const units = usage.units;
  return (
    usage.prompt_tokens > 0 ||
    usage.completion_tokens > 0 ||
    (units?.images ?? 0) > 0 ||
    (units?.audio_seconds ?? 0) > 0 ||
    (units?.characters ?? 0) > 0
  );
}

/**
 * What a call is charged per call and per unit, in micro-USD (the prices are USD per unit, per million for
 * characters): `per_request` once for an answered call, `per_image` for each image made, `per_audio_second` for
 * each second of audio, `per_million_characters` for the characters spoken.
 */
function perUnitMicros(price: ModelPrice, usage: Usage): number {
  const units = usage.units;
  return (
    (answered(usage) ? (price.per_request ?? 0) * 1_000_000 : 0) +
    (units?.images ?? 0) * (price.per_image ?? 0) * 1_000_000 +
    (units?.audio_seconds ?? 0) * (price.per_audio_second ?? 0) * 1_000_000 +
    (units?.characters ?? 0) * (price.per_million_characters ?? 0)
  );
}

/**
 * Prices a usage (price per million × tokens = micro-USD), at its long-context tier's prices when its prompt is
 * longer than the tier's threshold and a batch's at its batch prices (`usagePrices`), and what it was billed per
 * call and unit (`perUnitMicros`: the model's own prices, a tier has none; a batch's usage counts the tokens of
 * its calls, not the calls, and is charged none). The total is rounded to whole micro-dollars (budgets are INCRBY
 * counters): a fraction is rounded up with the probability of its size, so the charges of many requests add up
 * to their exact cost. Each part is its exact amount rounded down, and the micro-dollars the total's rounding
 * leaves go one each to the parts with the largest fractions, so the parts always sum to it.
 */
export function priceUsage(price: ModelPrice, usage: Usage, random: () => number): CostMicros {
  const prices = usagePrices(price, usage);
  const tokens = billedTokens(usage);
  const writePrice = prices.cache_write_input ?? prices.input;
  const exact: Record<BilledPart, number> = {
    input: snapped(tokens.textIn * prices.input),
    cached_input: snapped(tokens.cached * (prices.cached_input ?? prices.input)),
    cache_write: snapped(
      (tokens.written - tokens.writtenForAnHour) * writePrice +
        tokens.writtenForAnHour * (prices.cache_write_1h_input ?? writePrice),
    ),
    output: snapped(tokens.textOut * prices.output),
    audio: snapped(
      tokens.audioIn * (prices.audio_input ?? prices.input) +
        tokens.audioOut * (prices.audio_output ?? prices.output),
    ),
    image: snapped(
      tokens.imageIn * (prices.image_input ?? prices.input) +
        tokens.imageOut * (prices.image_output ?? prices.output),
    ),
    per_unit: usage.batch ? 0 : snapped(perUnitMicros(price, usage)),
  };
  const parts = roundedParts(exact, random);
  parts.reasoning = Math.min(parts.output, Math.round(snapped(tokens.reasoning * prices.output)));
  return parts;
}

/** Exact parts rounded to whole micro-dollars that sum to their total, itself rounded fairly (`priceUsage`). */
function roundedParts(exact: Record<BilledPart, number>, random: () => number): CostMicros {
  const exactTotal = snapped(BILLED_PARTS.reduce((sum, part) => sum + exact[part], 0));
  const floor = Math.floor(exactTotal);
  const total = floor === exactTotal ? floor : floor + (random() < exactTotal - floor ? 1 : 0);
  const parts = { ...NO_COST, total };
  for (const part of BILLED_PARTS) parts[part] = Math.floor(exact[part]);
  let left = total - BILLED_PARTS.reduce((sum, part) => sum + parts[part], 0);
  const byFraction = [...BILLED_PARTS].sort(
    (a, b) => exact[b] - Math.floor(exact[b]) - (exact[a] - Math.floor(exact[a])),
  );
  for (const part of byFraction) {
    if (left <= 0) break;
    parts[part] += 1;
    left -= 1;
  }
  return parts;
}

/**
 * A charge's parts in US dollars, as a settle answers them (the request log's `cost_breakdown`); `audio`,
 * `image` and `per_unit` only when the call was charged for them, so the records of text models keep their
 * shape.
 */
export function costBreakdown(parts: CostMicros): CostBreakdown {
  return {
    input: parts.input / 1_000_000,
    cached_input: parts.cached_input / 1_000_000,
    cache_write: parts.cache_write / 1_000_000,
    output: parts.output / 1_000_000,
    reasoning: parts.reasoning / 1_000_000,
    ...(parts.audio > 0 && { audio: parts.audio / 1_000_000 }),
    ...(parts.image > 0 && { image: parts.image / 1_000_000 }),
    ...(parts.per_unit > 0 && { per_unit: parts.per_unit / 1_000_000 }),
  };
}
