import { describe, expect, it } from 'vitest';
import { converseUsage } from './chat-to-converse.ts';

describe('converseUsage', () => {
  it('says cache reads and writes apart from inputTokens and inside totalTokens, as Converse counts them', () => {
    expect(
      converseUsage({
        prompt_tokens: 125,
        completion_tokens: 7,
        total_tokens: 132,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      }),
    ).toEqual({
      inputTokens: 5,
      outputTokens: 7,
      totalTokens: 132,
      cacheReadInputTokens: 100,
      cacheWriteInputTokens: 20,
    });
  });

  it('leaves the cache counts out when the answer used no cache', () => {
    expect(converseUsage({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 })).toEqual({
      inputTokens: 9,
      outputTokens: 3,
      totalTokens: 12,
    });
  });
});
