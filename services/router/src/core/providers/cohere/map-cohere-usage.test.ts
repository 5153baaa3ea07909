import { describe, expect, it } from 'vitest';
import { mapCohereUsage } from './map-cohere-usage.ts';

describe('mapCohereUsage', () => {
  it('charges the billed units, not the tokens the prompt template adds, and reports cached tokens', () => {
    expect(
      mapCohereUsage({
        billed_units: { input_tokens: 6_772, output_tokens: 248 },
        tokens: { input_tokens: 7_596, output_tokens: 645 },
        cached_tokens: 448,
      }),
    ).toEqual({
      prompt_tokens: 6_772,
      completion_tokens: 248,
      total_tokens: 7_020,
      prompt_tokens_details: { cached_tokens: 448 },
    });
  });

  it('falls back to the tokens for a count the billed units leave out', () => {
    expect(mapCohereUsage({ tokens: { input_tokens: 12, output_tokens: 7 } })).toEqual({
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
    });
    expect(
      mapCohereUsage({ billed_units: { input_tokens: 5 }, tokens: { input_tokens: 71, output_tokens: 9 } }),
    ).toEqual({ prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 });
  });

  it('answers zeros without usage', () => {
    expect(mapCohereUsage(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
