import type { Usage } from '@gw/shared';
import { promptCacheDetails } from '../prompt-cache-details.ts';
import type { AnthropicUsage } from './anthropic-schemas.ts';

/**
 * Anthropic counts prompt-cache reads and writes apart from `input_tokens`, and bills each at its own price;
 * OpenAI's `prompt_tokens` includes them, with the cache hits repeated in `prompt_tokens_details.cached_tokens`
 * (and here the writes in `cache_write_tokens`, those kept for an hour in `cache_write_1h_tokens`), so
 * `prompt_tokens` is every input token billed.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | null | undefined): Usage {
  const cacheRead = usage?.cache_read_input_tokens ?? undefined;
  const cacheWrite = usage?.cache_creation_input_tokens ?? undefined;
  const promptTokens = (usage?.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const completionTokens = usage?.output_tokens ?? 0;
  const mapped: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const details = promptCacheDetails({
    read: cacheRead,
    written: cacheWrite,
    writtenForAnHour: usage?.cache_creation?.ephemeral_1h_input_tokens ?? undefined,
  });
  if (details) mapped.prompt_tokens_details = details;
  return mapped;
}
