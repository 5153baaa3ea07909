import { describe, expect, it } from 'vitest';
import { mapCohereUsage } from './map-cohere-usage.ts';

describe('mapCohereUsage', () => {
  it('prefers tokens over billed units and reports cached tokens', () => {
    expect(
      mapCohereUsage({
        billed_units: { input_tokens: 12, output_tokens: 7 },
        tokens: { input_tokens: 507, output_tokens: 10 },
        cached_tokens: 448,
      }),
    ).toEqual({
      prompt_tokens: 507,
      completion_tokens: 10,
      total_tokens: 517,
      prompt_tokens_details: { cached_tokens: 448 },
    });
  });

  it('falls back to billed units', () => {
    expect(mapCohereUsage({ billed_units: { input_tokens: 12, output_tokens: 7 } })).toEqual({
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
    });
  });

  it('answers zeros without usage', () => {
    expect(mapCohereUsage(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
