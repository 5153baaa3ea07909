import type { Usage } from '@gw/shared';
import type { CohereUsage } from './cohere-schemas.ts';

/**
 * Cohere reports `billed_units` (what it charges) and `tokens` (what the model processed, with the prompt template
 * and special tokens Cohere adds, which it does not bill: docs.cohere.com "How does Cohere's pricing work"). gw
 * charges what Cohere bills: `billed_units`, `tokens` only for a count the billed units leave out.
 */
export function mapCohereUsage(usage: CohereUsage | null | undefined): Usage {
  const promptTokens = usage?.billed_units?.input_tokens ?? usage?.tokens?.input_tokens ?? 0;
  const completionTokens = usage?.billed_units?.output_tokens ?? usage?.tokens?.output_tokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (usage?.cached_tokens != null) mapped.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return mapped;
}
