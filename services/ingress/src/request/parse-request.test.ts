import { GatewayError } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { parseChatRequest, parseTarget, parseTextRequest } from './parse-request.ts';
import { findVirtualKey } from './virtual-key-header.ts';

function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const messages = [{ role: 'user', content: 'hi' }];

describe('parseChatRequest', () => {
  it('merges OpenAI top-level fields and native params, params winning, unknown ones kept', () => {
    const parsed = parseChatRequest({
      model: 'openai/gpt-4o-mini',
      messages,
      max_tokens: 5,
      temperature: 0.1,
      logit_bias: { 1: 2 },
      params: { max_tokens: 9 },
    });
    expect(parsed.target).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(parsed.params).toEqual({ max_tokens: 9, temperature: 0.1, logit_bias: { 1: 2 } });
  });

  it('keeps slashes of the model after the provider and parses fallbacks', () => {
    const parsed = parseChatRequest({
      model: 'groq/meta-llama/llama-4',
      messages,
      fallbacks: ['openai/gpt-4o'],
      stream: true,
    });
    expect(parsed.target).toEqual({ provider: 'groq', model: 'meta-llama/llama-4' });
    expect(parsed.fallbacks).toEqual([{ provider: 'openai', model: 'gpt-4o' }]);
    expect(parsed.stream).toBe(true);
  });

  it('leaves the provider of a bare model to governance, but not of a fallback', () => {
    expect(parseChatRequest({ model: 'gpt-4o', messages }).target).toEqual({ provider: '', model: 'gpt-4o' });
    expect(
      rejection(() => parseChatRequest({ model: 'openai/x', messages, fallbacks: ['gpt-4o'] })).param,
    ).toBe('fallbacks[0]');
  });

  it.each([
    [{ messages }, 'model: is required'],
    [{ model: 'openai/x' }, 'messages: is required'],
    [{ model: 'openai/x', messages: [] }, 'messages'],
    [{ model: 'openai/x', messages: 'hi' }, 'messages'],
    [{ model: 'openai/x', messages, max_tokens: 'many' }, 'max_tokens'],
    [{ model: 'openai/x', messages, params: { temperature: 9 } }, 'params.temperature'],
    [{ model: 'openai/x', messages, params: [] }, 'params: Invalid input: expected object'],
    [{ model: 'openai/x', messages: [{ role: 'wizard', content: 'x' }] }, 'messages.0.role'],
    [{ model: '/x', messages }, "model: '/x' must be '<provider>/<model>'"],
  ])('rejects %j with a 400 naming the field', (body, text) => {
    const error = rejection(() => parseChatRequest(body));
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request');
    expect(error.message).toContain(text);
  });
});

describe('parseTextRequest', () => {
  it('accepts the separate provider field with a bare model, and text or prompt', () => {
    const parsed = parseTextRequest({
      provider: 'openai',
      model: 'gpt-3.5-turbo-instruct',
      text: 'Once',
      params: { stop_sequences: ['.'] },
    });
    expect(parsed).toMatchObject({
      operation: 'text',
      target: { provider: 'openai', model: 'gpt-3.5-turbo-instruct' },
      prompt: 'Once',
    });
    expect(parsed.params).toEqual({ stop_sequences: ['.'] });
    expect(parseTextRequest({ model: 'openai/x', prompt: ['a', 'b'] }).prompt).toEqual(['a', 'b']);
    expect(rejection(() => parseTextRequest({ model: 'openai/x' })).message).toBe('text: is required');
  });
});

describe('parseTarget', () => {
  it('refuses a bare model unless allowed', () => {
    expect(rejection(() => parseTarget('gpt-4o', 'model')).status).toBe(400);
    expect(parseTarget('gpt-4o', 'model', { bareAllowed: true })).toEqual({ provider: '', model: 'gpt-4o' });
  });
});

describe('findVirtualKey', () => {
  it('finds sk-gw- keys in each of the five headers and ignores other values', () => {
    const key = 'sk-gw-abc';
    expect(findVirtualKey({ 'x-gw-vk': key })).toBe(key);
    expect(findVirtualKey({ authorization: `Bearer ${key}` })).toBe(key);
    expect(findVirtualKey({ 'x-api-key': key })).toBe(key);
    expect(findVirtualKey({ 'x-goog-api-key': key })).toBe(key);
    expect(findVirtualKey({ 'api-key': key })).toBe(key);
    expect(
      findVirtualKey({ authorization: 'Bearer sk-proj-openai', 'x-api-key': 'sk-ant-x' }),
    ).toBeUndefined();
  });
});
