import { openAiRequestExpectations, runProviderContract } from '@gw/testkit/provider-contract';
import { describe, expect, it } from 'vitest';
import { openAiWireFixtures, textViaChatAnswer } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { convertToGroqBody } from './convert-to-groq-body.ts';
import { groqAdapter } from './groq-adapter.ts';

const model = 'llama-3.3-70b-versatile';
// Groq's true format: x_groq on every chunk, usage in x_groq on the finish chunk, tool calls whole.
const style = {
  model,
  extra: { system_fingerprint: 'fp_c06d5113ec', x_groq: { id: 'req_01jbd6g2qdfw2adyrt2az8hz4w' } },
  streamUsage: 'x-groq',
  streamToolCall: 'whole',
  toolCallId: 'call_z2ka',
  // Groq's prompt caching reports hits as OpenAI does (no cache-write charge), with its own timings beside.
  billedUsage: {
    wire: {
      queue_time: 0.0186,
      prompt_tokens: 1_200,
      prompt_time: 0.0203,
      completion_tokens: 300,
      completion_time: 0.2449,
      total_tokens: 1_500,
      total_time: 0.2652,
      prompt_tokens_details: { cached_tokens: 1_024 },
    },
    expected: {
      prompt_tokens: 1_200,
      completion_tokens: 300,
      total_tokens: 1_500,
      prompt_tokens_details: { cached_tokens: 1_024 },
    },
  },
} as const;
const wire = openAiWireFixtures(style);

runProviderContract({
  name: 'groq',
  adapter: groqAdapter,
  model,
  key: { id: 'k1', value: 'gsk_test', config: {} },
  // The fake stands for https://api.groq.com/openai: Groq's paths are OpenAI's under /openai.
  baseUrl: (fakeUrl) => `${fakeUrl}/openai`,
  upstream: {
    ...wire.upstream,
    text: () => ({ body: textViaChatAnswer(style) }),
    textStream: undefined,
  },
  billedUsage: wire.billedUsage,
  expectRequest: openAiRequestExpectations({
    model,
    headers: { authorization: 'Bearer gsk_test' },
    paths: { chat: '/openai/v1/chat/completions' },
    textViaChat: true,
  }),
});

describe('groq body', () => {
  it('leaves out the params Groq does not support', () => {
    expect(
      convertToGroqBody({ model, messages: [], logprobs: true, top_logprobs: 2, logit_bias: {}, n: 1 }),
    ).toEqual({
      model,
      messages: [],
      n: 1,
    });
  });

  it('refuses more than one choice before calling Groq', () => {
    expect(() => convertToGroqBody({ model, messages: [], n: 2 })).toThrow(/n must be 1/);
  });
});
