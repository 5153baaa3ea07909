import type { Usage } from '@gw/shared';
import type { AnthropicUsage } from './anthropic-schemas.ts';

/**
 * Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI's `prompt_tokens` includes them,
 * with the cache hits repeated in `prompt_tokens_details.cached_tokens`.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | null | undefined): Usage {
  const cacheRead = usage?.cache_read_input_tokens ?? undefined;
  const promptTokens =
    (usage?.input_tokens ?? 0) + (cacheRead ?? 0) + (usage?.cache_creation_input_tokens ?? 0);
  const completionTokens = usage?.output_tokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cacheRead !== undefined) mapped.prompt_tokens_details = { cached_tokens: cacheRead };
  return mapped;
}
