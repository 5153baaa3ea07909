import type { Usage } from '@gw/shared';
import type { OpenAiUsage } from './openai-schemas.ts';

export function mapOpenAiUsage(usage: OpenAiUsage | null | undefined): Usage {
  if (!usage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const mapped: Usage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined && cached !== null) mapped.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined && reasoning !== null)
    mapped.completion_tokens_details = { reasoning_tokens: reasoning };
  return mapped;
}
