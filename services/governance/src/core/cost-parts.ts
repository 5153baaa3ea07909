import type { ModelPrice, Usage } from '@gw/shared';
import type { CostBreakdown } from './governance-messages.ts';

/**
 * What one call cost in micro-USD, by what the provider billed: uncached text input, input read from the prompt
 * cache, input written to it, text output, and audio in and out. The five parts sum to `total` exactly;
 * `reasoning` is the part of `output` the model spent reasoning, shown apart and never added to it.
 */
export interface CostMicros {
  total: number;
  input: number;
  cached_input: number;
  cache_write: number;
  output: number;
  audio: number;
  reasoning: number;
}

export const NO_COST: CostMicros = {
  total: 0,
  input: 0,
  cached_input: 0,
  cache_write: 0,
  output: 0,
  audio: 0,
  reasoning: 0,
};

/** The billed parts of a usage, in the order `CostMicros` names them. */
const BILLED_PARTS = ['input', 'cached_input', 'cache_write', 'output', 'audio'] as const;

type BilledPart = (typeof BILLED_PARTS)[number];

/** What each kind of token costs: a model's prices, or those of its long-context tier. */
export type TokenPrices = Omit<ModelPrice, 'context_window' | 'above'>;

/**
 * The prices a request is billed at: its model's long-context tier when its prompt (cache reads and writes
 * included) is longer than the tier's threshold, wholly, as Google and Anthropic bill it; else the model's own.
 */
export function pricesFor(price: ModelPrice, promptTokens: number): TokenPrices {
  return price.above && promptTokens > price.above.tokens ? price.above : price;
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
 * The tokens of a usage by how they are billed. Cache reads, cache writes and audio are parts of `prompt_tokens`
 * (as the adapters map them), so they are taken out of the text input, each bounded by what is left; audio and
 * reasoning are parts of `completion_tokens`, so audio is taken out of the text output, and reasoning is a part
 * of that text output, priced once, as output.
 */
function billedTokens(usage: Usage) {
  const details = usage.prompt_tokens_details;
  const cached = Math.min(details?.cached_tokens ?? 0, usage.prompt_tokens);
  const written = Math.min(details?.cache_write_tokens ?? 0, usage.prompt_tokens - cached);
  const audioIn = Math.min(details?.audio_tokens ?? 0, usage.prompt_tokens - cached - written);
  const audioOut = Math.min(usage.completion_tokens_details?.audio_tokens ?? 0, usage.completion_tokens);
  const textOut = usage.completion_tokens - audioOut;
  return {
    textIn: usage.prompt_tokens - cached - written - audioIn,
    cached,
    written,
    writtenForAnHour: Math.min(details?.cache_write_1h_tokens ?? 0, written),
    audioIn,
    textOut,
    audioOut,
    reasoning: Math.min(usage.completion_tokens_details?.reasoning_tokens ?? 0, textOut),
  };
}

/**
 * Prices a usage (price per million × tokens = micro-USD), at its long-context tier's prices when its prompt is
 * longer than the tier's threshold (`pricesFor`). The total is rounded to whole micro-dollars (budgets are INCRBY
 * counters): a fraction is rounded up with the probability of its size, so the charges of many requests add up
 * to their exact cost. Each part is its exact amount rounded down, and the micro-dollars the total's rounding
 * leaves go one each to the parts with the largest fractions, so the parts always sum to it.
 */
export function priceUsage(price: ModelPrice, usage: Usage, random: () => number): CostMicros {
  const prices = pricesFor(price, usage.prompt_tokens);
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
 * A charge's parts in US dollars, as a settle answers them (the request log's `cost_breakdown`); `audio` only
 * when the call was charged for audio, so the records of text models keep their shape.
 */
export function costBreakdown(parts: CostMicros): CostBreakdown {
  return {
    input: parts.input / 1_000_000,
    cached_input: parts.cached_input / 1_000_000,
    cache_write: parts.cache_write / 1_000_000,
    output: parts.output / 1_000_000,
    reasoning: parts.reasoning / 1_000_000,
    ...(parts.audio > 0 && { audio: parts.audio / 1_000_000 }),
  };
}
