// OpenAI's usage of an audio answer (gpt-4o-audio-preview: a spoken question in, a spoken answer out), parsed
// and mapped as the adapter does: the audio parts of the prompt and of the completion are kept for pricing.
import { describe, expect, it } from 'vitest';
import { mapOpenAiChatResponse } from './map-openai-response.ts';
import { mapOpenAiUsage } from './map-openai-usage.ts';
import { openAiChatResponseSchema } from './openai-schemas.ts';

/** A chat completion with audio as OpenAI answers it: zeros listed for what the call did not use. */
const AUDIO_ANSWER = {
  id: 'chatcmpl-audio',
  object: 'chat.completion',
  created: 1_733_000_000,
  model: 'gpt-4o-audio-preview-2024-12-17',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        audio: { id: 'audio_1', data: 'UklGRg==', expires_at: 1_733_003_600, transcript: 'Hello.' },
      },
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 1_064,
    completion_tokens: 140,
    total_tokens: 1_204,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1_040 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 128,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  },
};

describe('mapOpenAiUsage', () => {
  it('keeps the audio tokens of the prompt and of the completion of a chat completion', () => {
    const parsed = openAiChatResponseSchema.parse(AUDIO_ANSWER);
    const result = mapOpenAiChatResponse(parsed, { raw: AUDIO_ANSWER, model: 'gpt-4o-audio-preview' });
    expect(result.usage).toEqual({
      prompt_tokens: 1_064,
      completion_tokens: 140,
      total_tokens: 1_204,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1_040 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 128 },
    });
  });

  it('leaves audio out when the answer reports none, and keeps a text answer as it was', () => {
    expect(
      mapOpenAiUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { audio_tokens: 0 },
        completion_tokens_details: { audio_tokens: null },
      }),
    ).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });
});
