import { describe, expect, it } from 'vitest';
import { openAiUsageSchema } from '../openai/openai-schemas.ts';
import { mapMistralUsage } from './map-mistral-usage.ts';

const mapped = (wire: object) => mapMistralUsage(openAiUsageSchema.parse(wire));

describe('mapMistralUsage', () => {
  it('maps a text answer’s totals, with no audio seconds when Mistral sends null', () => {
    expect(
      mapped({ prompt_tokens: 200, completion_tokens: 100, total_tokens: 300, prompt_audio_seconds: null }),
    ).toEqual({ prompt_tokens: 200, completion_tokens: 100, total_tokens: 300 });
  });

  it('keeps the seconds of audio a Voxtral prompt held, as units', () => {
    expect(
      mapped({ prompt_tokens: 150, completion_tokens: 42, total_tokens: 192, prompt_audio_seconds: 30 }),
    ).toEqual({ prompt_tokens: 150, completion_tokens: 42, total_tokens: 192, units: { audio_seconds: 30 } });
  });

  it('reads cache hits under the names Mistral’s SDK also reads', () => {
    const totals = { prompt_tokens: 1_200, completion_tokens: 300, total_tokens: 1_500 };
    expect(mapped({ ...totals, prompt_token_details: { cached_tokens: 640 } })).toEqual({
      ...totals,
      prompt_tokens_details: { cached_tokens: 640 },
    });
    expect(mapped({ ...totals, num_cached_tokens: 576 })).toEqual({
      ...totals,
      prompt_tokens_details: { cached_tokens: 576 },
    });
    // The documented name wins over the others.
    expect(
      mapped({ ...totals, prompt_tokens_details: { cached_tokens: 1_024 }, num_cached_tokens: 576 }),
    ).toEqual({ ...totals, prompt_tokens_details: { cached_tokens: 1_024 } });
  });
});
