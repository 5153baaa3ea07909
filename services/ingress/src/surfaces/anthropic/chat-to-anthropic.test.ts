import { describe, expect, it } from 'vitest';
import { anthropicUsage } from './chat-to-anthropic.ts';

describe('anthropicUsage', () => {
  it('says cache reads and writes apart from input_tokens, as Anthropic counts them', () => {
    expect(
      anthropicUsage({
        prompt_tokens: 125,
        completion_tokens: 7,
        total_tokens: 132,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      }),
    ).toEqual({
      input_tokens: 5,
      output_tokens: 7,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 100,
    });
  });
});
