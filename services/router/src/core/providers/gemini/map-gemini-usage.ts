import type { Usage } from '@gw/shared';
import type { GeminiUsage } from './gemini-schemas.ts';

/**
 * Thinking tokens are billed as output, so they count as completion tokens as OpenAI counts reasoning (once:
 * `candidatesTokenCount` leaves them out). `promptTokenCount` includes the cached content, as OpenAI's
 * `prompt_tokens` includes its cache hits; the prompts of tools the model ran are billed as input too.
 */
export function mapGeminiUsage(usage: GeminiUsage | undefined): Usage {
  if (!usage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const prompt = usage.promptTokenCount + (usage.toolUsePromptTokenCount ?? 0);
  const completion = usage.candidatesTokenCount + thoughts;
  const mapped: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.totalTokenCount ?? prompt + completion,
  };
  if (usage.cachedContentTokenCount !== undefined) {
    mapped.prompt_tokens_details = { cached_tokens: usage.cachedContentTokenCount };
  }
  if (usage.thoughtsTokenCount !== undefined) {
    mapped.completion_tokens_details = { reasoning_tokens: usage.thoughtsTokenCount };
  }
  return mapped;
}
