import type { Usage } from '@gw/shared';
import type { CohereUsage } from './cohere-schemas.ts';

/**
 * Cohere reports `tokens` (what the model processed) and `billed_units` (what is charged, which leaves out
 * the prompt template). `tokens` is what OpenAI's usage means; `billed_units` is the fallback when absent.
 */
export function mapCohereUsage(usage: CohereUsage | null | undefined): Usage {
  const promptTokens = usage?.tokens?.input_tokens ?? usage?.billed_units?.input_tokens ?? 0;
  const completionTokens = usage?.tokens?.output_tokens ?? usage?.billed_units?.output_tokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (usage?.cached_tokens != null) mapped.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return mapped;
}
