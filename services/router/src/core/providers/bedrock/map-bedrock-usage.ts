import type { Usage } from '@gw/shared';
import type { BedrockUsage } from './bedrock-schemas.ts';

/**
 * Bedrock counts prompt-cache reads and writes apart from `inputTokens` (as Anthropic does); OpenAI's
 * `prompt_tokens` includes them, with the cache hits repeated in `prompt_tokens_details.cached_tokens`.
 */
export function mapBedrockUsage(usage: BedrockUsage | null | undefined): Usage {
  const cacheRead = usage?.cacheReadInputTokens ?? undefined;
  const promptTokens = (usage?.inputTokens ?? 0) + (cacheRead ?? 0) + (usage?.cacheWriteInputTokens ?? 0);
  const completionTokens = usage?.outputTokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cacheRead !== undefined) mapped.prompt_tokens_details = { cached_tokens: cacheRead };
  return mapped;
}
