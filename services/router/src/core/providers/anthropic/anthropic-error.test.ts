import { describe, expect, it } from 'vitest';
import { errorAnswer } from '../../../testing/fixtures/anthropic-fixtures.ts';
import { anthropicStreamError, readAnthropicErrorMessage } from './anthropic-error.ts';

describe('readAnthropicErrorMessage', () => {
  it('reads error.message of an Anthropic error body', () => {
    expect(readAnthropicErrorMessage(errorAnswer)).toBe('bad things happened');
  });

  it('reads a bare message (proxies in front of Anthropic)', () => {
    expect(readAnthropicErrorMessage({ message: 'Forbidden' })).toBe('Forbidden');
  });

  it.each([['not json'], [null], [{ error: { type: 'api_error' } }]])('answers undefined for %j', (body) => {
    expect(readAnthropicErrorMessage(body)).toBeUndefined();
  });
});

describe('anthropicStreamError', () => {
  it.each([
    ['overloaded_error', 529],
    ['rate_limit_error', 429],
    ['api_error', 500],
    ['invalid_request_error', 400],
    ['an_error_added_later', 502],
  ])('gives %s the status %i', (type, status) => {
    const error = anthropicStreamError('anthropic', { error: { type, message: 'boom' } });
    expect(error).toMatchObject({
      type: 'upstream_error',
      status,
      message: 'boom',
      code: type,
      upstream: true,
      provider: 'anthropic',
    });
  });

  it('names the error type when the event has no message', () => {
    const error = anthropicStreamError('anthropic', { error: { type: 'overloaded_error' } });
    expect(error.message).toBe('anthropic stream failed (overloaded_error)');
  });
});
