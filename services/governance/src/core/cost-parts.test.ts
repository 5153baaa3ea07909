// Every token is priced as the provider bills it: uncached input, cache reads, cache writes and output each at
// their own price, reasoning once (inside output); the parts of a cost sum to the micro-dollar it charges.
import type { Usage } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { priceUsage } from './cost-parts.ts';
import { PriceCatalog, type ServedModel } from './pricing.ts';

/** A model as the provider that serves it is asked for it. */
const served = (model: string, provider = 'openai'): ServedModel => ({ provider, model });

const never = () => 1;
const always = () => 0;

describe('priceUsage', () => {
  const sonnet = { input: 3, output: 15, cached_input: 0.3, cache_write_input: 3.75 };

  it('prices uncached input, cache reads, cache writes and output each at its own price', () => {
    // Anthropic's answer: input_tokens 100, cache_read 10_000, cache_creation 2_000, output 500.
    const usage: Usage = {
      prompt_tokens: 12_100,
      completion_tokens: 500,
      total_tokens: 12_600,
      prompt_tokens_details: { cached_tokens: 10_000, cache_write_tokens: 2_000 },
    };
    expect(priceUsage(sonnet, usage, never)).toEqual({
      total: 300 + 3_000 + 7_500 + 7_500,
      input: 300,
      cached_input: 3_000,
      cache_write: 7_500,
      output: 7_500,
      audio: 0,
      reasoning: 0,
    });
  });

  it('prices reasoning tokens once, as the output they are part of, and shows their share', () => {
    const o3 = { input: 2, output: 8, cached_input: 0.5 };
    const usage: Usage = {
      prompt_tokens: 1_000,
      completion_tokens: 3_000,
      total_tokens: 4_000,
      prompt_tokens_details: { cached_tokens: 400 },
      completion_tokens_details: { reasoning_tokens: 2_500 },
    };
    expect(priceUsage(o3, usage, never)).toEqual({
      total: 1_200 + 200 + 24_000,
      input: 1_200,
      cached_input: 200,
      cache_write: 0,
      output: 24_000,
      audio: 0,
      reasoning: 20_000,
    });
  });

  it('prices the cache writes kept for an hour at their own price, the rest at the 5-minute price', () => {
    const usage: Usage = {
      prompt_tokens: 3_000,
      completion_tokens: 0,
      total_tokens: 3_000,
      prompt_tokens_details: { cache_write_tokens: 3_000, cache_write_1h_tokens: 1_000 },
    };
    const price = { ...sonnet, cache_write_1h_input: 6 };
    expect(priceUsage(price, usage, never)).toMatchObject({ total: 13_500, input: 0, cache_write: 13_500 });
    // Without an hour's price, an hour's write costs what a 5-minute one does.
    expect(priceUsage(sonnet, usage, never).cache_write).toBe(11_250);
  });

  it('prices cache writes at the input price when the model lists none', () => {
    const usage: Usage = {
      prompt_tokens: 1_000,
      completion_tokens: 0,
      total_tokens: 1_000,
      prompt_tokens_details: { cache_write_tokens: 1_000 },
    };
    expect(priceUsage({ input: 2, output: 8 }, usage, never).cache_write).toBe(2_000);
  });

  it('gives the micro-dollars its rounding leaves to the parts, so they always sum to the total', () => {
    // 7 uncached (0.7), 3 cached (0.03), 5 written (0.5), 1 output (0.6): 1.83 micro-dollars.
    const price = { input: 0.1, output: 0.6, cached_input: 0.01, cache_write_input: 0.1 };
    const usage: Usage = {
      prompt_tokens: 15,
      completion_tokens: 1,
      total_tokens: 16,
      prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 5 },
    };
    const up = priceUsage(price, usage, always);
    expect(up).toEqual({
      total: 2,
      input: 1,
      cached_input: 0,
      cache_write: 0,
      output: 1,
      audio: 0,
      reasoning: 0,
    });
    const down = priceUsage(price, usage, never);
    expect(down).toEqual({
      total: 1,
      input: 1,
      cached_input: 0,
      cache_write: 0,
      output: 0,
      audio: 0,
      reasoning: 0,
    });
  });

  it('never counts cached or written tokens beyond the prompt', () => {
    const usage: Usage = {
      prompt_tokens: 100,
      completion_tokens: 0,
      total_tokens: 100,
      prompt_tokens_details: { cached_tokens: 80, cache_write_tokens: 80 },
    };
    expect(priceUsage(sonnet, usage, never)).toMatchObject({ input: 0, cached_input: 24, cache_write: 75 });
  });
});

describe('PriceCatalog.cost', () => {
  it('prices Anthropic cache writes at 1.25 × input from the built-in list', () => {
    const catalog = new PriceCatalog({ random: never });
    const usage: Usage = {
      prompt_tokens: 100_000,
      completion_tokens: 0,
      total_tokens: 100_000,
      prompt_tokens_details: { cache_write_tokens: 100_000 },
    };
    expect(catalog.cost(served('claude-sonnet-4-5-20250929', 'anthropic'), usage).cache_write).toBe(375_000);
    expect(catalog.costMicros(served('claude-sonnet-4-5-20250929', 'anthropic'), usage)).toBe(375_000);
  });

  it('costs nothing, in every part, for a model without a price', () => {
    const catalog = new PriceCatalog();
    expect(
      catalog.cost(served('llama3.2:3b', 'ollama'), {
        prompt_tokens: 10,
        completion_tokens: 10,
        total_tokens: 20,
      }),
    ).toEqual({
      total: 0,
      input: 0,
      cached_input: 0,
      cache_write: 0,
      output: 0,
      audio: 0,
      reasoning: 0,
    });
  });
});
