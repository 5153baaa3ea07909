import { describe, expect, it } from 'vitest';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts';

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['OTHER', false, 'stop'],
    [undefined, false, null],
  ] as const)('%s (function called: %s) is %s', (reason, called, expected) => {
    expect(mapGeminiFinishReason(reason, called)).toBe(expected);
  });
});
