import { describe, expect, it } from 'vitest';
import { mapAnthropicUsage } from './map-anthropic-usage.ts';

describe('mapAnthropicUsage', () => {
  it('counts cache reads and writes into prompt_tokens and reports each apart', () => {
    expect(
      mapAnthropicUsage({
        input_tokens: 5,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
        output_tokens: 7,
      }),
    ).toEqual({
      prompt_tokens: 125,
      completion_tokens: 7,
      total_tokens: 132,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    });
  });

  it('reports the cache writes kept for an hour apart, as Anthropic bills them higher', () => {
    expect(
      mapAnthropicUsage({
        input_tokens: 5,
        cache_creation_input_tokens: 20,
        cache_creation: { ephemeral_5m_input_tokens: 12, ephemeral_1h_input_tokens: 8 },
        output_tokens: 7,
      }),
    ).toEqual({
      prompt_tokens: 25,
      completion_tokens: 7,
      total_tokens: 32,
      prompt_tokens_details: { cache_write_tokens: 20, cache_write_1h_tokens: 8 },
    });
  });

  it('reports a cache write without a read (the first request of a cached prefix)', () => {
    expect(
      mapAnthropicUsage({ input_tokens: 5, cache_creation_input_tokens: 2048, output_tokens: 7 }),
    ).toEqual({
      prompt_tokens: 2053,
      completion_tokens: 7,
      total_tokens: 2060,
      prompt_tokens_details: { cache_write_tokens: 2048 },
    });
  });

  it('leaves cached_tokens out when Anthropic reports no cache', () => {
    expect(mapAnthropicUsage({ input_tokens: 20, output_tokens: 8 })).toEqual({
      prompt_tokens: 20,
      completion_tokens: 8,
      total_tokens: 28,
    });
  });

  it('answers zeros without usage', () => {
    expect(mapAnthropicUsage(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
