import type { Usage } from '@gw/shared';
import { mapOpenAiUsage } from '../openai/map-openai-usage.ts';
import type { OpenAiUsage } from '../openai/openai-schemas.ts';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Mistral's usage is OpenAI's (its prompt-cache hits in `prompt_tokens_details.cached_tokens`, billed at a tenth of
 * the input price: docs.mistral.ai "Prompt caching"), with what its API adds: the cache hits under the names its
 * SDK also reads (`prompt_token_details`, `num_cached_tokens`) and the seconds of audio in the prompt
 * (`prompt_audio_seconds`, null without audio), which Voxtral bills by the minute (`units.audio_seconds`).
 */
export function mapMistralUsage(usage: OpenAiUsage | null | undefined): Usage {
  const mapped = mapOpenAiUsage(usage);
  if (!usage) return mapped;
  const legacyDetails = usage['prompt_token_details'] as { cached_tokens?: unknown } | null | undefined;
  const cached = count(legacyDetails?.cached_tokens) ?? count(usage['num_cached_tokens']);
  if (mapped.prompt_tokens_details?.cached_tokens === undefined && cached !== undefined) {
    mapped.prompt_tokens_details = { ...mapped.prompt_tokens_details, cached_tokens: cached };
  }
  const seconds = count(usage['prompt_audio_seconds']);
  if (seconds) mapped.units = { audio_seconds: seconds };
  return mapped;
}
