import type { Usage } from '@gw/shared';
import type { OpenAiUsage } from './openai-schemas.ts';

/** A count OpenAI reported, when it reported one above zero (its usage lists zeros for what a call did not use). */
function counted(tokens: number | null | undefined): number | undefined {
  return tokens ? tokens : undefined;
}

/**
 * OpenAI's usage as gw bills it: the prompt tokens read from the cache and the audio ones (both parts of
 * `prompt_tokens`), the completion tokens spent reasoning and the audio ones (parts of `completion_tokens`). A
 * cache read or reasoning count is kept even at zero (the answer said so); audio only when there was some.
 */
export function mapOpenAiUsage(usage: OpenAiUsage | null | undefined): Usage {
  if (!usage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const mapped: Usage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const audioIn = counted(usage.prompt_tokens_details?.audio_tokens);
  if ((cached !== undefined && cached !== null) || audioIn !== undefined) {
    mapped.prompt_tokens_details = {
      ...(cached !== undefined && cached !== null && { cached_tokens: cached }),
      ...(audioIn !== undefined && { audio_tokens: audioIn }),
    };
  }
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  const audioOut = counted(usage.completion_tokens_details?.audio_tokens);
  if ((reasoning !== undefined && reasoning !== null) || audioOut !== undefined) {
    mapped.completion_tokens_details = {
      ...(reasoning !== undefined && reasoning !== null && { reasoning_tokens: reasoning }),
      ...(audioOut !== undefined && { audio_tokens: audioOut }),
    };
  }
  return mapped;
}
