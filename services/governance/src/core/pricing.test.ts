// Prices resolve from the names providers actually answer with (dated, versioned, region-prefixed); a model
// with no price costs what the operator configured, or nothing is priced at all (admission then refuses it
// under a budget: governance-core.test.ts). The operator's overrides and unpriced default are live: a new
// snapshot applies to the next lookup, names resolved under the old one included.
import { fixed, LiveValue, type Usage } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_PRICES,
  type ModelPrice,
  modelNameCandidates,
  PriceCatalog,
  type ServedModel,
} from './pricing.ts';

/** A model as the provider that serves it is asked for it. */
const served = (model: string, provider = 'openai'): ServedModel => ({ provider, model });

/** gpt-4o's built-in price, its batch prices (half) included. */
const GPT_4O = {
  input: 2.5,
  output: 10,
  cached_input: 1.25,
  batch: { input: 1.25, output: 5, cached_input: 0.625 },
};

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
    expect(catalog.listPrice(served(model))).toBeDefined();
    expect(catalog.listPrice(served(model))).toEqual(catalog.listPrice(served(base, '')));
  });

  it('charges dated names like their base model', () => {
    expect(catalog.costMicros(served('gpt-4o-2024-08-06'), usage(1_000, 1_000))).toBe(12_500);
  });

  it('leaves a model without a price unpriced, unless a price for such models is configured', () => {
    expect(catalog.price(served('llama3.2:3b', 'ollama'))).toBeUndefined();
    expect(catalog.costMicros(served('llama3.2:3b', 'ollama'), usage(1_000, 1_000))).toBe(0);
    const withDefault = new PriceCatalog({
      settings: fixed({ unpriced_model_price: { input: 1, output: 2 } }),
    });
    expect(withDefault.costMicros(served('llama3.2:3b', 'ollama'), usage(1_000, 1_000))).toBe(3_000);
    expect(withDefault.listPrice(served('llama3.2:3b', 'ollama'))).toBeUndefined();
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
    for (let call = 0; call < 10_000; call++) total += fair.costMicros(served('gpt-4o-mini'), usage(64, 0));
    expect(Math.abs(total - 96_000) / 96_000).toBeLessThan(0.005);
    expect(fair.costMicros(served('gpt-4o-mini'), usage(1_000, 1_000))).toBe(750);
  });

  it('lets the config override a list price under any name', () => {
    const overridden = new PriceCatalog({ overrides: fixed({ 'gpt-4o': { input: 1, output: 1 } }) });
    expect(overridden.costMicros(served('gpt-4o-2024-11-20'), usage(1_000, 0))).toBe(1_000);
    expect(overridden.resolve(served('gpt-4o-2024-11-20'))).toEqual({
      name: 'gpt-4o',
      price: { input: 1, output: 1 },
      from: 'override',
    });
    // Another model whose name starts the same way keeps its own built-in price.
    expect(overridden.resolve(served('gpt-4o-mini-2024-07-18'))).toMatchObject({
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
    expect(
      catalog.resolve(served('us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'anthropic')),
    ).toMatchObject({
      name: 'claude-3-5-sonnet-20241022',
      from: 'override',
    });
    expect(catalog.resolve(served('claude-3-5-sonnet-20240620', 'anthropic'))).toMatchObject({
      name: 'claude-3-5-sonnet',
      from: 'built_in',
    });
    expect(catalog.listPrice(served('my-finetune-2025-01-01'))).toEqual({
      input: 4,
      output: 8,
    });
    expect(catalog.listPrice(served('acme/my-finetune', 'ollama'))).toEqual({
      input: 4,
      output: 8,
    });
  });

  it("prices a provider's model by its override `provider/model` first, under any of the model's names", () => {
    const catalog = new PriceCatalog({
      overrides: fixed({
        'azure/gpt-4o': { input: 5, output: 15 },
        'gpt-4o-2024-08-06': { input: 2, output: 8 },
        'openai/gpt-4o-mini': { input: 1, output: 1 },
      }),
    });
    // Azure's own price, ahead of the plain name's override of that very version.
    expect(catalog.resolve(served('gpt-4o-2024-08-06', 'azure'))).toEqual({
      name: 'azure/gpt-4o',
      price: { input: 5, output: 15 },
      from: 'override',
      provider: 'azure',
    });
    expect(catalog.costMicros(served('gpt-4o', 'azure'), usage(1_000, 1_000))).toBe(20_000);
    // Anyone else serving the model pays the plain names' prices.
    expect(catalog.resolve(served('gpt-4o-2024-08-06'))).toMatchObject({ name: 'gpt-4o-2024-08-06' });
    expect(catalog.resolve(served('gpt-4o'))).toMatchObject({ name: 'gpt-4o', from: 'built_in' });
    expect(catalog.costMicros(served('gpt-4o-mini'), usage(1_000, 1_000))).toBe(2_000);
    expect(catalog.costMicros(served('gpt-4o-mini', 'azure'), usage(1_000, 1_000))).toBe(750);
    // The routing, admission and settlement lookups all read it.
    expect(catalog.worstCaseMicros(served('gpt-4o', 'azure'), 1_000, 1_000)).toBe(20_000);
    expect(catalog.worstCaseMicros(served('gpt-4o', 'openai'), 1_000, 1_000)).toBe(12_500);
    // A name the provider and the model could spell together is kept apart from the pair.
    expect(catalog.resolve({ provider: '', model: 'azure/gpt-4o' })).toEqual({
      name: 'azure/gpt-4o',
      price: { input: 5, output: 15 },
      from: 'override',
    });
    expect(catalog.resolve({ provider: 'azure/gpt', model: '4o' })).toBeUndefined();
  });

  it('keeps a name with a slash that names no serving provider a model name of its own', () => {
    const catalog = new PriceCatalog({
      overrides: fixed({ 'meta-llama/llama-3.1-8b': { input: 0.2, output: 0.2 } }),
    });
    for (const provider of ['together', 'groq', '']) {
      expect(catalog.resolve(served('meta-llama/llama-3.1-8b', provider))).toEqual({
        name: 'meta-llama/llama-3.1-8b',
        price: { input: 0.2, output: 0.2 },
        from: 'override',
      });
    }
    // A provider of that name serving the base model is priced by it too: the name says so.
    expect(catalog.resolve(served('llama-3.1-8b-2025-01-01', 'meta-llama'))).toMatchObject({
      name: 'meta-llama/llama-3.1-8b',
      provider: 'meta-llama',
    });
  });

  it('follows a new snapshot of the overrides at the next lookup, names it resolved before included', () => {
    const overrides = new LiveValue<Record<string, ModelPrice>>({});
    const settings = new LiveValue<{ unpriced_model_price?: ModelPrice }>({});
    const catalog = new PriceCatalog({ overrides, settings });
    expect(catalog.price(served('llama3.2:3b', 'ollama'))).toBeUndefined();
    expect(catalog.listPrice(served('gpt-4o-2024-08-06'))).toEqual(GPT_4O);

    overrides.replace({ 'llama3.2': { input: 0.5, output: 0.5 }, 'gpt-4o': { input: 1, output: 2 } });
    expect(catalog.costMicros(served('llama3.2:3b', 'ollama'), usage(1_000, 0))).toBe(0);
    expect(catalog.price(served('llama3.2', 'ollama'))).toEqual({ input: 0.5, output: 0.5 });
    expect(catalog.listPrice(served('gpt-4o-2024-08-06'))).toEqual({
      input: 1,
      output: 2,
    });
    expect(catalog.costMicros(served('gpt-4o-2024-08-06'), usage(1_000, 1_000))).toBe(3_000);

    // Deleted, the override gives the model back its built-in price.
    overrides.replace({});
    expect(catalog.listPrice(served('gpt-4o-2024-08-06'))).toEqual(GPT_4O);

    settings.replace({ unpriced_model_price: { input: 3, output: 3 } });
    expect(catalog.costMicros(served('llama3.2:3b', 'ollama'), usage(1_000, 1_000))).toBe(6_000);
    expect(catalog.listPrice(served('llama3.2:3b', 'ollama'))).toBeUndefined();
    settings.replace({});
    expect(catalog.price(served('llama3.2:3b', 'ollama'))).toBeUndefined();
  });

  it("carries half of each list price as the batch prices of OpenAI's and Anthropic's chat models", () => {
    expect(catalog.listPrice(served('gpt-4o-2024-08-06'))?.batch).toEqual({
      input: 1.25,
      output: 5,
      cached_input: 0.625,
    });
    // Every kind of token, cache writes included, and no long-context tier.
    expect(catalog.listPrice(served('claude-sonnet-4-5', 'anthropic'))?.batch).toEqual({
      input: 1.5,
      output: 7.5,
      cached_input: 0.15,
      cache_write_input: 1.875,
      cache_write_1h_input: 3,
    });
    const chat = BUILT_IN_PRICES.filter(
      ({ provider, model }) =>
        (provider === 'openai' || provider === 'anthropic') &&
        !/embedding|image|dall-e|whisper|tts/.test(model),
    );
    expect(chat).toHaveLength(33);
    for (const { model, price } of chat) {
      const { above: _tier, context_window: _window, batch, ...list } = price;
      expect(batch, model).toEqual(
        Object.fromEntries(Object.entries(list).map(([field, usd]) => [field, usd / 2])),
      );
    }
    // Nothing else is batched at a discount: a batch of them is charged its list prices.
    const others = BUILT_IN_PRICES.filter((entry) => !chat.includes(entry));
    expect(others.filter(({ price }) => price.batch !== undefined)).toEqual([]);
  });

  it("prices OpenAI's image, speech and transcription models by the unit they bill", () => {
    const charged = new PriceCatalog({ random: () => 1 });
    const units = (unitsUsed: Usage['units']): Usage => ({ ...usage(0, 0), units: unitsUsed });
    // One standard 1024² image: $0.04 (DALL·E 3), $0.02 (DALL·E 2).
    expect(charged.costMicros(served('dall-e-3'), units({ images: 1 }))).toBe(40_000);
    expect(charged.costMicros(served('dall-e-2'), units({ images: 3 }))).toBe(60_000);
    // A minute of audio transcribed: $0.006.
    expect(charged.costMicros(served('whisper-1'), units({ audio_seconds: 60 }))).toBe(6_000);
    // A million characters spoken: $15, HD $30.
    expect(charged.costMicros(served('tts-1'), units({ characters: 1_000_000 }))).toBe(15_000_000);
    expect(charged.costMicros(served('tts-1-hd'), units({ characters: 1_000 }))).toBe(30_000);
    // gpt-image-1: 100 text and 500 image prompt tokens (100 of them cached), one image of 4,160 tokens out.
    const edit = {
      ...usage(600, 4_160),
      prompt_tokens_details: { cached_tokens: 100, image_tokens: 400 },
      completion_tokens_details: { image_tokens: 4_160 },
    };
    expect(charged.cost(served('gpt-image-1'), edit)).toMatchObject({
      total: 500 + 125 + 4_000 + 166_400,
      input: 500,
      cached_input: 125,
      image: 4_000 + 166_400,
    });
  });

  it('dates every built-in price and names the page it was read from', () => {
    expect(BUILT_IN_PRICES.length).toBe(82);
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
