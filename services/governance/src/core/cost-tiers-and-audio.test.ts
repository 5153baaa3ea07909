// A request whose prompt is longer than its model's long-context threshold is priced wholly at the tier's prices
// (Gemini 2.5 Pro, Claude Sonnet 4 / 4.5 above 200k), in what it is charged and in what admission reserves; audio
// tokens are priced at their own prices (the text ones when the model lists none). To the micro-dollar.
import { fixed, type ModelPrice, type Usage } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { costBreakdown, priceUsage } from './cost-parts.ts';
import { PriceCatalog, type ServedModel } from './pricing.ts';

/** A model as the provider that serves it is asked for it. */
const served = (model: string, provider = 'openai'): ServedModel => ({ provider, model });

const never = () => 1;
const catalog = new PriceCatalog({ random: never });

/** A Gemini answer: `prompt` tokens of which `cached` came from cached content, and 1,000 output tokens. */
const gemini = (prompt: number, cached: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: 1_000,
  total_tokens: prompt + 1_000,
  prompt_tokens_details: { cached_tokens: cached },
});

describe('long-context tiers', () => {
  it('prices a Gemini 2.5 Pro prompt of exactly 200k tokens at the base prices', () => {
    // 100k uncached × $1.25, 100k cached × $0.31, 1k output × $10.
    expect(catalog.cost(served('gemini-2.5-pro', 'gemini'), gemini(200_000, 100_000))).toEqual({
      total: 125_000 + 31_000 + 10_000,
      input: 125_000,
      cached_input: 31_000,
      cache_write: 0,
      output: 10_000,
      audio: 0,
      image: 0,
      per_unit: 0,
      reasoning: 0,
    });
  });

  it('prices a Gemini 2.5 Pro prompt one token above 200k wholly at the tier, cached tokens included', () => {
    // 100,001 uncached × $2.50 = 250,002.5, 100k cached × $0.625, 1k output × $15: the half rounds down here.
    expect(catalog.cost(served('gemini-2.5-pro-002', 'gemini'), gemini(200_001, 100_000))).toEqual({
      total: 250_002 + 62_500 + 15_000,
      input: 250_002,
      cached_input: 62_500,
      cache_write: 0,
      output: 15_000,
      audio: 0,
      image: 0,
      per_unit: 0,
      reasoning: 0,
    });
  });

  /** An Anthropic answer: a fifth of its prompt uncached, three fifths read from the cache, a fifth written. */
  const sonnet = (prompt: number): Usage => ({
    prompt_tokens: prompt,
    completion_tokens: 2_000,
    total_tokens: prompt + 2_000,
    prompt_tokens_details: {
      cached_tokens: (prompt / 5) * 3,
      cache_write_tokens: prompt / 5,
      cache_write_1h_tokens: 20_000,
    },
  });

  it('prices a Claude Sonnet 4.5 prompt of 200k tokens, cache reads and writes counted, at the base prices', () => {
    // 40k × $3, 120k × $0.30, 20k × $3.75 + 20k × $6 (an hour), 2k × $15.
    expect(catalog.cost(served('claude-sonnet-4-5-20250929', 'anthropic'), sonnet(200_000))).toMatchObject({
      total: 120_000 + 36_000 + 195_000 + 30_000,
      input: 120_000,
      cached_input: 36_000,
      cache_write: 195_000,
      output: 30_000,
    });
  });

  it('prices a Claude Sonnet 4 prompt above 200k at the 1M-context prices, cache multipliers on top', () => {
    // 50k × $6, 150k × $0.60, 30k × $7.50 + 20k × $12 (an hour), 2k × $22.50.
    expect(catalog.cost(served('claude-sonnet-4-20250514', 'anthropic'), sonnet(250_000))).toMatchObject({
      total: 300_000 + 90_000 + 465_000 + 45_000,
      input: 300_000,
      cached_input: 90_000,
      cache_write: 465_000,
      output: 45_000,
    });
  });

  it('prices a tier wholly at its own prices: what it leaves out falls back within the tier', () => {
    const price = { input: 1, output: 2, cached_input: 0.1, above: { tokens: 10, input: 4, output: 8 } };
    const usage: Usage = {
      prompt_tokens: 11,
      completion_tokens: 1,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 10 },
    };
    expect(priceUsage(price, usage, never)).toMatchObject({
      total: 52,
      input: 4,
      cached_input: 40,
      output: 8,
    });
  });

  it('reserves at the tier prices for a prompt above the threshold (admission)', () => {
    expect(catalog.worstCaseMicros(served('gemini-2.5-pro', 'gemini'), 200_000, 1_000)).toBe(
      250_000 + 10_000,
    );
    expect(catalog.worstCaseMicros(served('gemini-2.5-pro', 'gemini'), 200_001, 1_000)).toBe(
      500_003 + 15_000,
    );
    // Claude's tier: $6 in, $22.50 out (cache writes are not reserved: only a marked prompt is written).
    expect(catalog.worstCaseMicros(served('claude-sonnet-4-5', 'anthropic'), 300_000, 1_000)).toBe(
      1_800_000 + 22_500,
    );
  });
});

describe('audio tokens', () => {
  /** gpt-4o-audio-preview's answer to a spoken question (map-openai-usage.test.ts): audio in and out. */
  const spoken: Usage = {
    prompt_tokens: 1_064,
    completion_tokens: 140,
    total_tokens: 1_204,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1_040 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 128 },
  };

  it('prices audio in and out at their own prices and text at the text prices', () => {
    const audioPreview = { input: 2.5, output: 10, audio_input: 40, audio_output: 80 };
    // text: 24 × $2.50 in, 12 × $10 out; audio: 1,040 × $40 in, 128 × $80 out.
    const parts = priceUsage(audioPreview, spoken, never);
    expect(parts).toEqual({
      total: 60 + 120 + 41_600 + 10_240,
      input: 60,
      cached_input: 0,
      cache_write: 0,
      output: 120,
      audio: 41_600 + 10_240,
      image: 0,
      per_unit: 0,
      reasoning: 0,
    });
    expect(costBreakdown(parts)).toEqual({
      input: 0.00006,
      cached_input: 0,
      cache_write: 0,
      output: 0.00012,
      reasoning: 0,
      audio: 0.05184,
    });
  });

  it('prices audio at the text prices when the model lists none', () => {
    const parts = priceUsage({ input: 2.5, output: 10 }, spoken, never);
    // As if every token were text: 1,064 × $2.50 + 140 × $10.
    expect(parts.total).toBe(2_660 + 1_400);
    expect(parts).toMatchObject({ input: 60, output: 120, audio: 2_600 + 1_280 });
  });

  it('never counts audio beyond the prompt left after the cache, nor beyond the completion', () => {
    const usage: Usage = {
      prompt_tokens: 100,
      completion_tokens: 10,
      total_tokens: 110,
      prompt_tokens_details: { cached_tokens: 60, audio_tokens: 100 },
      completion_tokens_details: { audio_tokens: 50 },
    };
    const price = { input: 1, output: 1, cached_input: 0.5, audio_input: 10, audio_output: 10 };
    expect(priceUsage(price, usage, never)).toMatchObject({
      total: 30 + 400 + 100,
      input: 0,
      cached_input: 30,
      output: 0,
      audio: 400 + 100,
    });
  });

  it('keeps the breakdown of a text call without an audio part', () => {
    const parts = priceUsage(
      { input: 1, output: 1 },
      { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      never,
    );
    expect(costBreakdown(parts)).not.toHaveProperty('audio');
  });
});

describe('the reserve of admission', () => {
  const reserveAndBill = (price: ModelPrice, bill: Usage, maxCompletionTokens = bill.completion_tokens) => {
    const catalog = new PriceCatalog({ overrides: fixed({ m: price }), random: never });
    return {
      reserved: catalog.worstCaseMicros(served('m'), bill.prompt_tokens, maxCompletionTokens),
      billed: catalog.costMicros(served('m'), bill),
    };
  };

  it('reserves each token at the dearest price it can be billed at: audio, images; not cache writes', () => {
    const audio = { input: 2.5, output: 10, audio_input: 40, audio_output: 80 };
    const spoken = {
      prompt_tokens: 1_000,
      completion_tokens: 500,
      total_tokens: 1_500,
      prompt_tokens_details: { audio_tokens: 1_000 },
      completion_tokens_details: { audio_tokens: 500 },
    };
    expect(reserveAndBill(audio, spoken)).toEqual({ reserved: 80_000, billed: 80_000 });
    const image = { input: 5, output: 10, image_input: 10, image_output: 40 };
    const drawn = {
      prompt_tokens: 100,
      completion_tokens: 4_160,
      total_tokens: 4_260,
      prompt_tokens_details: { image_tokens: 100 },
      completion_tokens_details: { image_tokens: 4_160 },
    };
    expect(reserveAndBill(image, drawn)).toEqual({ reserved: 1_000 + 166_400, billed: 1_000 + 166_400 });
    // A prompt written to the cache for an hour is billed 2 × input; the reserve is at the input price (every
    // Claude prompt reserved at the write price would halve what a budget admits), above by the write premium.
    const sonnet = { input: 3, output: 15, cache_write_input: 3.75, cache_write_1h_input: 6 };
    const cached = {
      prompt_tokens: 10_000,
      completion_tokens: 100,
      total_tokens: 10_100,
      prompt_tokens_details: { cache_write_tokens: 10_000, cache_write_1h_tokens: 10_000 },
    };
    expect(reserveAndBill(sonnet, cached)).toEqual({ reserved: 30_000 + 1_500, billed: 60_000 + 1_500 });
  });

  it('reserves the price per call, beside the tokens', () => {
    const search = { input: 1, output: 2, per_request: 0.01 };
    expect(reserveAndBill(search, { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 })).toEqual({
      reserved: 10_000 + 100 + 100,
      billed: 10_000 + 100 + 100,
    });
  });
});
