// Every token is priced as the provider bills it: uncached input, cache reads, cache writes and output each at
// their own price, reasoning once (inside output), image tokens at theirs, and what is billed per call, image,
// second of audio or character at its unit price; the parts of a cost sum to the micro-dollar it charges.
import { EMPTY_USAGE, fixed, type Usage } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { costBreakdown, NO_COST, priceUsage } from './cost-parts.ts';
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
      image: 0,
      per_unit: 0,
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
      image: 0,
      per_unit: 0,
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
      image: 0,
      per_unit: 0,
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
      image: 0,
      per_unit: 0,
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

describe('image tokens', () => {
  /** gpt-image-1's prices (USD per million): text in $5, cached $1.25, image in $10, image out $40. */
  const imageModel = { input: 5, output: 40, cached_input: 1.25, image_input: 10, image_output: 40 };
  /** An edit of one picture: 200 text and 800 image prompt tokens (50 cached), one 1024² image out (4,160). */
  const edit: Usage = {
    prompt_tokens: 1_050,
    completion_tokens: 4_160,
    total_tokens: 5_210,
    prompt_tokens_details: { cached_tokens: 50, image_tokens: 800 },
    completion_tokens_details: { image_tokens: 4_160 },
  };

  it('prices image tokens in and out at their own prices, apart from the text', () => {
    // 200 × $5 + 50 × $1.25 + 800 × $10 + 4,160 × $40 = 175,462.5 micro-dollars.
    expect(priceUsage(imageModel, edit, never)).toEqual({
      total: 175_462,
      input: 1_000,
      cached_input: 62,
      cache_write: 0,
      output: 0,
      audio: 0,
      image: 8_000 + 166_400,
      per_unit: 0,
      reasoning: 0,
    });
    // Rounded up, the micro-dollar goes to the part with the largest fraction: the cache read's half.
    expect(priceUsage(imageModel, edit, always)).toMatchObject({ total: 175_463, cached_input: 63 });
    expect(costBreakdown(priceUsage(imageModel, edit, never))).toEqual({
      input: 0.001,
      cached_input: 0.000062,
      cache_write: 0,
      output: 0,
      reasoning: 0,
      image: 0.1744,
    });
  });

  it('prices image tokens at the text prices when the model lists none', () => {
    const parts = priceUsage({ input: 5, output: 40 }, edit, never);
    // 1,000 prompt tokens × $5 (the cached 50 at $5 too) and 4,160 × $40.
    expect(parts).toMatchObject({ total: 5_250 + 166_400, input: 1_000, cached_input: 250, image: 170_400 });
  });

  it('never counts image tokens beyond what the prompt and completion leave after cache, audio and each other', () => {
    const usage: Usage = {
      prompt_tokens: 100,
      completion_tokens: 30,
      total_tokens: 130,
      prompt_tokens_details: { cached_tokens: 30, audio_tokens: 50, image_tokens: 100 },
      completion_tokens_details: { audio_tokens: 4, image_tokens: 20, reasoning_tokens: 10 },
    };
    const price = {
      input: 1,
      output: 2,
      audio_input: 10,
      audio_output: 10,
      image_input: 100,
      image_output: 100,
    };
    // In: 30 cached at $1, 50 audio at $10, 20 image at $100, no text; out: 4 audio at $10, 20 image at $100,
    // 6 text at $2 (its reasoning at most those 6).
    expect(priceUsage(price, usage, never)).toEqual({
      total: 30 + 500 + 40 + 2_000 + 2_000 + 12,
      input: 0,
      cached_input: 30,
      cache_write: 0,
      output: 12,
      audio: 540,
      image: 4_000,
      per_unit: 0,
      reasoning: 12,
    });
  });
});

describe('prices per call and per unit', () => {
  it('charges per_request once for an answered call, beside its tokens, and nothing for an empty one', () => {
    const search = { input: 1, output: 1, per_request: 0.005 };
    const usage = { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 };
    expect(priceUsage(search, usage, never)).toMatchObject({
      total: 5_150,
      input: 100,
      output: 50,
      per_unit: 5_000,
    });
    // A call that failed, or was never sent, is settled with an empty usage: no call to charge.
    expect(priceUsage(search, EMPTY_USAGE, never)).toEqual(NO_COST);
    // One that made an image and reported no tokens was answered.
    expect(priceUsage(search, { ...EMPTY_USAGE, units: { images: 1 } }, never).total).toBe(5_000);
  });

  it('charges each image made at per_image', () => {
    const dallE3 = { input: 0, output: 0, per_image: 0.04 };
    const parts = priceUsage(dallE3, { ...EMPTY_USAGE, units: { images: 2 } }, never);
    expect(parts).toEqual({ ...NO_COST, total: 80_000, per_unit: 80_000 });
    expect(costBreakdown(parts)).toEqual({
      input: 0,
      cached_input: 0,
      cache_write: 0,
      output: 0,
      reasoning: 0,
      per_unit: 0.08,
    });
  });

  it('charges seconds of audio at per_audio_second, the fraction of a micro-dollar rounded fairly', () => {
    // whisper-1: $0.006 a minute, 100 micro-dollars a second; 61.5 seconds, then 2.345 (234.5 micro-dollars).
    const whisper = { input: 0, output: 0, per_audio_second: 0.0001 };
    const minute = { ...EMPTY_USAGE, units: { audio_seconds: 61.5 } };
    expect(priceUsage(whisper, minute, never)).toEqual({ ...NO_COST, total: 6_150, per_unit: 6_150 });
    const short = { ...EMPTY_USAGE, units: { audio_seconds: 2.345 } };
    expect(priceUsage(whisper, short, never)).toEqual({ ...NO_COST, total: 234, per_unit: 234 });
    expect(priceUsage(whisper, short, always)).toEqual({ ...NO_COST, total: 235, per_unit: 235 });
  });

  it('charges characters at per_million_characters', () => {
    // tts-1: $15 a million characters, 15 micro-dollars a character.
    const tts = { input: 0, output: 0, per_million_characters: 15 };
    const usage = { ...EMPTY_USAGE, units: { characters: 1_234 } };
    expect(priceUsage(tts, usage, never)).toEqual({ ...NO_COST, total: 18_510, per_unit: 18_510 });
  });

  it('adds every unit price and the tokens of one call, the parts summing to the total', () => {
    const price = {
      input: 2,
      output: 8,
      per_request: 0.001,
      per_image: 0.02,
      per_audio_second: 0.0001,
      per_million_characters: 30,
    };
    const usage: Usage = {
      prompt_tokens: 333,
      completion_tokens: 77,
      total_tokens: 410,
      units: { images: 3, audio_seconds: 12.345, characters: 4_321 },
    };
    // 666 + 616 in tokens; 1,000 + 60,000 + 1,234.5 + 129,630 per call and unit (191,864.5).
    const parts = priceUsage(price, usage, never);
    expect(parts).toEqual({ ...NO_COST, total: 193_146, input: 666, output: 616, per_unit: 191_864 });
    expect(parts.input + parts.output + parts.per_unit).toBe(parts.total);
  });
});

describe('batch prices', () => {
  const batch = { id: 'batch_abc', model: 'gpt-b' };

  it("prices a batch's usage at the batch prices, what they leave out falling back within them", () => {
    const price = { input: 2, output: 8, cached_input: 0.5, batch: { input: 1, output: 4 } };
    const usage: Usage = {
      prompt_tokens: 10_000,
      completion_tokens: 1_000,
      total_tokens: 11_000,
      prompt_tokens_details: { cached_tokens: 2_000 },
      batch,
    };
    expect(priceUsage(price, usage, never)).toEqual({
      ...NO_COST,
      total: 8_000 + 2_000 + 4_000,
      input: 8_000,
      cached_input: 2_000,
      output: 4_000,
    });
    // Without batch prices, the model's own.
    expect(priceUsage({ input: 2, output: 8 }, usage, never).total).toBe(20_000 + 8_000);
  });

  it('prices a batch without the long-context tier (its usage adds up its calls) nor the price per call', () => {
    const price = {
      input: 1,
      output: 4,
      per_request: 0.01,
      above: { tokens: 5_000, input: 2, output: 8 },
      batch: { input: 0.5, output: 2 },
    };
    const usage = { prompt_tokens: 10_000, completion_tokens: 1_000, total_tokens: 11_000, batch };
    expect(priceUsage(price, usage, never)).toEqual({
      ...NO_COST,
      total: 5_000 + 2_000,
      input: 5_000,
      output: 2_000,
    });
  });

  it('prices a batch by the model it ran, as the provider of the call that read it serves it', () => {
    const catalog = new PriceCatalog({
      overrides: fixed({
        'gpt-b': { input: 2, output: 8, batch: { input: 1, output: 4 } },
        'azure/gpt-b': { input: 3, output: 12, batch: { input: 1.5, output: 6 } },
      }),
      random: never,
    });
    const usage = { prompt_tokens: 1_000, completion_tokens: 1_000, total_tokens: 2_000, batch };
    expect(catalog.costMicros(served('*'), usage)).toBe(5_000);
    expect(catalog.costMicros(served('*', 'azure'), usage)).toBe(7_500);
    // The same usage, no batch: the call's own model, which has no price.
    expect(catalog.costMicros(served('*'), { ...usage, batch: undefined })).toBe(0);
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
      image: 0,
      per_unit: 0,
      reasoning: 0,
    });
  });
});
