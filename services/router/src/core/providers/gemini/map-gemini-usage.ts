import type { Usage } from '@gw/shared';
import type { GeminiUsage } from './gemini-schemas.ts';

/** Thinking tokens are billed as output, so they count as completion tokens as OpenAI counts reasoning. */
export function mapGeminiUsage(usage: GeminiUsage | undefined): Usage {
  if (!usage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const completion = usage.candidatesTokenCount + thoughts;
  const mapped: Usage = {
    prompt_tokens: usage.promptTokenCount,
    completion_tokens: completion,
    total_tokens: usage.totalTokenCount ?? usage.promptTokenCount + completion,
  };
  if (usage.cachedContentTokenCount !== undefined) {
    mapped.prompt_tokens_details = { cached_tokens: usage.cachedContentTokenCount };
  }
  if (usage.thoughtsTokenCount !== undefined) {
    mapped.completion_tokens_details = { reasoning_tokens: usage.thoughtsTokenCount };
  }
  return mapped;
}
