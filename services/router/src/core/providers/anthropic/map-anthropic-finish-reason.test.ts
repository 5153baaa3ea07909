import { describe, expect, it } from 'vitest';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';

describe('mapAnthropicFinishReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['a_reason_added_later', 'stop'],
    [null, null],
    [undefined, null],
  ])('%s → %s', (stopReason, finishReason) => {
    expect(mapAnthropicFinishReason(stopReason)).toBe(finishReason);
  });
});
