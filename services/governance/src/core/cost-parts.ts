import type { ModelPrice, Usage } from '@gw/shared';
import type { CostBreakdown } from './governance-messages.ts';

/**
 * What one call cost in micro-USD, by what the provider billed: uncached input, input read from the prompt
 * cache, input written to it, and output. The four parts sum to `total` exactly; `reasoning` is the part of
 * `output` the model spent reasoning, shown apart and never added to it.
 */
export interface CostMicros {
  total: number;
  input: number;
  cached_input: number;
  cache_write: number;
  output: number;
  reasoning: number;
}

export const NO_COST: CostMicros = {
  total: 0,
  input: 0,
  cached_input: 0,
  cache_write: 0,
  output: 0,
  reasoning: 0,
};

/** The billed parts of a usage, in the order `CostMicros` names them. */
const BILLED_PARTS = ['input', 'cached_input', 'cache_write', 'output'] as const;

/**
 * Prices in decimal dollars make exact integers come out a hair off (0.15 × 1e6…): those are the integer they
 * meant, and any other amount is itself.
 */
function snapped(amount: number): number {
  const whole = Math.round(amount);
  return Math.abs(amount - whole) < 1e-6 ? whole : amount;
}

/**
 * Prices a usage (price per million × tokens = micro-USD). The total is rounded to whole micro-dollars (budgets
 * are INCRBY counters): a fraction is rounded up with the probability of its size, so the charges of many
 * requests add up to their exact cost. Each part is its exact amount rounded down, and the micro-dollars the
 * total's rounding leaves go one each to the parts with the largest fractions, so the parts always sum to it.
 *
 * Cache reads and writes are parts of `prompt_tokens` (as the adapters map them), so they are taken out of the
 * uncached input; reasoning tokens are part of `completion_tokens`, so they are priced once, as output.
 */
export function priceUsage(price: ModelPrice, usage: Usage, random: () => number): CostMicros {
  const details = usage.prompt_tokens_details;
  const cached = Math.min(details?.cached_tokens ?? 0, usage.prompt_tokens);
  const written = Math.min(details?.cache_write_tokens ?? 0, usage.prompt_tokens - cached);
  const writtenForAnHour = Math.min(details?.cache_write_1h_tokens ?? 0, written);
  const writePrice = price.cache_write_input ?? price.input;
  const reasoningTokens = Math.min(
    usage.completion_tokens_details?.reasoning_tokens ?? 0,
    usage.completion_tokens,
  );
  const exact = {
    input: snapped((usage.prompt_tokens - cached - written) * price.input),
    cached_input: snapped(cached * (price.cached_input ?? price.input)),
    cache_write: snapped(
      (written - writtenForAnHour) * writePrice +
        writtenForAnHour * (price.cache_write_1h_input ?? writePrice),
    ),
    output: snapped(usage.completion_tokens * price.output),
  };
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
  parts.reasoning = Math.min(parts.output, Math.round(snapped(reasoningTokens * price.output)));
  return parts;
}

/** A charge's parts in US dollars, as a settle answers them (the request log's `cost_breakdown`). */
export function costBreakdown(parts: CostMicros): CostBreakdown {
  return {
    input: parts.input / 1_000_000,
    cached_input: parts.cached_input / 1_000_000,
    cache_write: parts.cache_write / 1_000_000,
    output: parts.output / 1_000_000,
    reasoning: parts.reasoning / 1_000_000,
  };
}
