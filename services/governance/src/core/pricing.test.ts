// Prices resolve from the names providers actually answer with (dated, versioned, region-prefixed); a model
// with no price costs what the operator configured, or nothing is priced at all (admission then refuses it
// under a budget: governance-core.test.ts).
import { describe, expect, it } from 'vitest';
import { modelNameCandidates, PriceCatalog } from './pricing.ts';

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

describe('PriceCatalog', () => {
  const catalog = new PriceCatalog();

  it.each([
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['openai/gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-4-turbo', 'gpt-4-turbo'],
    ['gpt-4-turbo-2024-04-09', 'gpt-4-turbo'],
    ['gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['claude-3-5-haiku-latest', 'claude-3-5-haiku'],
    ['us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet'],
    ['claude-sonnet-4-5@20250929', 'claude-sonnet-4-5'],
    ['gemini-1.5-pro-002', 'gemini-1.5-pro'],
    ['mistral-large-2411', 'mistral-large'],
    ['mistral-small-latest', 'mistral-small'],
  ])('prices %s as %s', (model, base) => {
    expect(catalog.listPrice(model)).toBeDefined();
    expect(catalog.listPrice(model)).toEqual(catalog.listPrice(base));
  });

  it('charges dated names like their base model', () => {
    expect(catalog.costMicros('gpt-4o-2024-08-06', usage(1_000, 1_000))).toBe(12_500);
  });

  it('leaves a model without a price unpriced, unless a price for such models is configured', () => {
    expect(catalog.price('llama3.2:3b')).toBeUndefined();
    expect(catalog.costMicros('llama3.2:3b', usage(1_000, 1_000))).toBe(0);
    const withDefault = new PriceCatalog({}, { input: 1, output: 2 });
    expect(withDefault.costMicros('llama3.2:3b', usage(1_000, 1_000))).toBe(3_000);
    expect(withDefault.listPrice('llama3.2:3b')).toBeUndefined();
  });

  it('charges many cheap calls their exact total, not a micro-dollar rounded up each', () => {
    // 64 prompt tokens of gpt-4o-mini cost 9.6 micro-dollars: always rounding up charged 10 (+4.2%).
    let seed = 1;
    const random = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const fair = new PriceCatalog({}, undefined, random);
    let total = 0;
    for (let call = 0; call < 10_000; call++) total += fair.costMicros('gpt-4o-mini', usage(64, 0));
    expect(Math.abs(total - 96_000) / 96_000).toBeLessThan(0.005);
    expect(fair.costMicros('gpt-4o-mini', usage(1_000, 1_000))).toBe(750);
  });

  it('lets the config override a list price under any name', () => {
    const overridden = new PriceCatalog({ 'gpt-4o': { input: 1, output: 1 } });
    expect(overridden.costMicros('gpt-4o-2024-11-20', usage(1_000, 0))).toBe(1_000);
  });

  it('tries the most specific name first', () => {
    expect(modelNameCandidates('us.anthropic.claude-3-5-sonnet-20241022-v2:0')).toEqual([
      'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
      'anthropic.claude-3-5-sonnet-20241022-v2:0',
      'claude-3-5-sonnet-20241022-v2:0',
      'claude-3-5-sonnet-20241022',
      'claude-3-5-sonnet',
    ]);
  });
});
