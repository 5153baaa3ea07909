import { describe, expect, it } from 'vitest';
import { isCohereFailure, mapCohereFinishReason } from './map-cohere-finish-reason.ts';

describe('mapCohereFinishReason', () => {
  it.each([
    ['COMPLETE', 'stop'],
    ['STOP_SEQUENCE', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['TOOL_CALL', 'tool_calls'],
    ['ERROR_TOXIC', 'content_filter'],
    ['ERROR_LIMIT', 'length'],
    ['USER_CANCEL', 'stop'],
    ['SOMETHING_NEW', 'stop'],
    [null, null],
    [undefined, null],
  ])('maps %s to %s', (reason, expected) => {
    expect(mapCohereFinishReason(reason)).toBe(expected);
  });

  it('counts ERROR and TIMEOUT as failures, nothing else', () => {
    expect(isCohereFailure('ERROR')).toBe(true);
    expect(isCohereFailure('TIMEOUT')).toBe(true);
    expect(isCohereFailure('COMPLETE')).toBe(false);
    expect(isCohereFailure('ERROR_TOXIC')).toBe(false);
    expect(isCohereFailure(undefined)).toBe(false);
  });
});
