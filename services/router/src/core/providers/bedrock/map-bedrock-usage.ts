import type { Usage } from '@gw/shared';
import { promptCacheDetails } from '../prompt-cache-details.ts';
import type { BedrockUsage } from './bedrock-schemas.ts';

/**
 * Bedrock counts prompt-cache reads and writes apart from `inputTokens` (as Anthropic does), and bills each at
 * its own price; OpenAI's `prompt_tokens` includes them, with the cache hits repeated in
 * `prompt_tokens_details.cached_tokens` (and here the writes in `cache_write_tokens`).
 */
export function mapBedrockUsage(usage: BedrockUsage | null | undefined): Usage {
  const cacheRead = usage?.cacheReadInputTokens ?? undefined;
  const cacheWrite = usage?.cacheWriteInputTokens ?? undefined;
  const promptTokens = (usage?.inputTokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const completionTokens = usage?.outputTokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const details = promptCacheDetails({ read: cacheRead, written: cacheWrite });
  if (details) mapped.prompt_tokens_details = details;
  return mapped;
}
