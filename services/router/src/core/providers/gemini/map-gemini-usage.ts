import type { Usage } from '@gw/shared';
import type { GeminiModalityTokenCount, GeminiUsage } from './gemini-schemas.ts';

/** The tokens of one modality in Gemini's breakdowns, when there were any (a text answer lists TEXT only). */
function modalityTokens(
  modality: 'IMAGE' | 'AUDIO',
  ...breakdowns: Array<GeminiModalityTokenCount[] | undefined>
): number | undefined {
  let tokens = 0;
  for (const entry of breakdowns.flat()) {
    if (entry?.modality === modality) tokens += entry.tokenCount ?? 0;
  }
  return tokens > 0 ? tokens : undefined;
}

/**
 * Thinking tokens are billed as output, so they count as completion tokens as OpenAI counts reasoning (once:
 * `candidatesTokenCount` leaves them out). `promptTokenCount` includes the cached content, as OpenAI's
 * `prompt_tokens` includes its cache hits; the prompts of tools the model ran are billed as input too. The
 * images and audio of the prompt and of the answer (image and speech models) are billed at their own prices:
 * their tokens, parts of the totals, are read from the breakdowns by modality.
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
  const promptBreakdowns = [usage.promptTokensDetails, usage.toolUsePromptTokensDetails];
  const imageIn = modalityTokens('IMAGE', ...promptBreakdowns);
  const audioIn = modalityTokens('AUDIO', ...promptBreakdowns);
  if (usage.cachedContentTokenCount !== undefined || imageIn !== undefined || audioIn !== undefined) {
    mapped.prompt_tokens_details = {
      ...(usage.cachedContentTokenCount !== undefined && { cached_tokens: usage.cachedContentTokenCount }),
      ...(audioIn !== undefined && { audio_tokens: audioIn }),
      ...(imageIn !== undefined && { image_tokens: imageIn }),
    };
  }
  const imageOut = modalityTokens('IMAGE', usage.candidatesTokensDetails);
  const audioOut = modalityTokens('AUDIO', usage.candidatesTokensDetails);
  if (usage.thoughtsTokenCount !== undefined || imageOut !== undefined || audioOut !== undefined) {
    mapped.completion_tokens_details = {
      ...(usage.thoughtsTokenCount !== undefined && { reasoning_tokens: usage.thoughtsTokenCount }),
      ...(audioOut !== undefined && { audio_tokens: audioOut }),
      ...(imageOut !== undefined && { image_tokens: imageOut }),
    };
  }
  return mapped;
}
