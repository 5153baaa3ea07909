import { GatewayError } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { buildCohereChatBody } from './build-cohere-chat-body.ts';

const build = (params: Record<string, unknown>) =>
  buildCohereChatBody({ model: 'command-a', messages: [{ role: 'user', content: 'Hi' }], params });

describe('buildCohereChatBody', () => {
  it('renames OpenAI params to Cohere names', () => {
    expect(
      build({ max_completion_tokens: 9, top_p: 0.5, top_k: 3, stop: 'END', seed: 7, temperature: 0 }),
    ).toEqual({
      model: 'command-a',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 9,
      p: 0.5,
      k: 3,
      stop_sequences: ['END'],
      seed: 7,
      temperature: 0,
    });
  });

  it('prefers max_tokens and stop_sequences over their OpenAI aliases', () => {
    expect(
      build({ max_tokens: 5, max_completion_tokens: 9, stop_sequences: ['A'], stop: ['B'] }),
    ).toMatchObject({
      max_tokens: 5,
      stop_sequences: ['A'],
    });
  });

  it('maps response_format json_schema into json_object and keeps the others', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      build({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } })[
        'response_format'
      ],
    ).toEqual({ type: 'json_object', json_schema: schema });
    expect(build({ response_format: { type: 'json_object' } })['response_format']).toEqual({
      type: 'json_object',
    });
    expect(build({ response_format: { type: 'text' } })['response_format']).toEqual({ type: 'text' });
  });

  it('passes unknown params through and drops OpenAI-only ones', () => {
    const body = build({
      safety_mode: 'STRICT',
      frequency_penalty: 0.1,
      user: 'u1',
      n: 1,
      parallel_tool_calls: false,
      stream_options: { include_usage: true },
      logit_bias: { 1: 2 },
    });
    expect(body).toEqual({
      model: 'command-a',
      messages: [{ role: 'user', content: 'Hi' }],
      safety_mode: 'STRICT',
      frequency_penalty: 0.1,
    });
  });

  it('refuses n > 1, as Cohere answers a single choice', () => {
    expect(() => build({ n: 2 })).toThrow(GatewayError);
  });

  it('does not let a passed-through param override model or messages', () => {
    expect(build({ model: 'other', messages: [] })).toMatchObject({
      model: 'command-a',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });
});
