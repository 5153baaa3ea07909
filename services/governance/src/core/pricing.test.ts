// Prices resolve from the names providers actually answer with (dated, versioned, region-prefixed); a model
// with no price costs what the operator configured, or nothing is priced at all (admission then refuses it
// under a budget: governance-core.test.ts). The operator's overrides and unpriced default are live: a new
// snapshot applies to the next lookup, names resolved under the old one included.
import { fixed, LiveValue } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PRICES, type ModelPrice, modelNameCandidates, PriceCatalog } from './pricing.ts';

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
    const withDefault = new PriceCatalog({
      settings: fixed({ unpriced_model_price: { input: 1, output: 2 } }),
    });
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
    const fair = new PriceCatalog({ random });
    let total = 0;
    for (let call = 0; call < 10_000; call++) total += fair.costMicros('gpt-4o-mini', usage(64, 0));
    expect(Math.abs(total - 96_000) / 96_000).toBeLessThan(0.005);
    expect(fair.costMicros('gpt-4o-mini', usage(1_000, 1_000))).toBe(750);
  });

  it('lets the config override a list price under any name', () => {
    const overridden = new PriceCatalog({ overrides: fixed({ 'gpt-4o': { input: 1, output: 1 } }) });
    expect(overridden.costMicros('gpt-4o-2024-11-20', usage(1_000, 0))).toBe(1_000);
    expect(overridden.resolve('gpt-4o-2024-11-20')).toEqual({
      name: 'gpt-4o',
      price: { input: 1, output: 1 },
      from: 'override',
    });
    // Another model whose name starts the same way keeps its own built-in price.
    expect(overridden.resolve('gpt-4o-mini-2024-07-18')).toMatchObject({
      name: 'gpt-4o-mini',
      from: 'built_in',
    });
  });

  it('prices a dated or versioned name by its own override before its base model', () => {
    const catalog = new PriceCatalog({
      overrides: fixed({
        'claude-3-5-sonnet-20241022': { input: 2, output: 10 },
        'my-finetune': { input: 4, output: 8 },
      }),
    });
    expect(catalog.resolve('us.anthropic.claude-3-5-sonnet-20241022-v2:0')).toMatchObject({
      name: 'claude-3-5-sonnet-20241022',
      from: 'override',
    });
    expect(catalog.resolve('claude-3-5-sonnet-20240620')).toMatchObject({
      name: 'claude-3-5-sonnet',
      from: 'built_in',
    });
    expect(catalog.listPrice('my-finetune-2025-01-01')).toEqual({ input: 4, output: 8 });
    expect(catalog.listPrice('acme/my-finetune')).toEqual({ input: 4, output: 8 });
  });

  it('follows a new snapshot of the overrides at the next lookup, names it resolved before included', () => {
    const overrides = new LiveValue<Record<string, ModelPrice>>({});
    const settings = new LiveValue<{ unpriced_model_price?: ModelPrice }>({});
    const catalog = new PriceCatalog({ overrides, settings });
    expect(catalog.price('llama3.2:3b')).toBeUndefined();
    expect(catalog.listPrice('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10, cached_input: 1.25 });

    overrides.replace({ 'llama3.2': { input: 0.5, output: 0.5 }, 'gpt-4o': { input: 1, output: 2 } });
    expect(catalog.costMicros('llama3.2:3b', usage(1_000, 0))).toBe(0);
    expect(catalog.price('llama3.2')).toEqual({ input: 0.5, output: 0.5 });
    expect(catalog.listPrice('gpt-4o-2024-08-06')).toEqual({ input: 1, output: 2 });
    expect(catalog.costMicros('gpt-4o-2024-08-06', usage(1_000, 1_000))).toBe(3_000);

    // Deleted, the override gives the model back its built-in price.
    overrides.replace({});
    expect(catalog.listPrice('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10, cached_input: 1.25 });

    settings.replace({ unpriced_model_price: { input: 3, output: 3 } });
    expect(catalog.costMicros('llama3.2:3b', usage(1_000, 1_000))).toBe(6_000);
    expect(catalog.listPrice('llama3.2:3b')).toBeUndefined();
    settings.replace({});
    expect(catalog.price('llama3.2:3b')).toBeUndefined();
  });

  it('dates every built-in price and names the page it was read from', () => {
    expect(BUILT_IN_PRICES.length).toBe(76);
    for (const entry of BUILT_IN_PRICES) {
      expect(entry.as_of, entry.model).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(entry.source, entry.model).toMatch(/https:\/\//);
    }
    expect(new Set(BUILT_IN_PRICES.map((entry) => entry.model)).size).toBe(BUILT_IN_PRICES.length);
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
