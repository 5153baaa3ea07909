import { describe, expect, it } from 'vitest';
import { chatAnswer } from '../../../testing/fixtures/anthropic-fixtures.ts';
import { anthropicMessageSchema } from './anthropic-schemas.ts';
import { mapAnthropicResponse } from './map-anthropic-response.ts';

const map = (body: unknown) =>
  mapAnthropicResponse(anthropicMessageSchema.parse(body), { raw: body, model: 'claude-sonnet-4-5' });

describe('mapAnthropicResponse', () => {
  it('joins text blocks, turns tool_use blocks into tool calls, and thinking into reasoning_content', () => {
    const result = map({
      ...chatAnswer,
      content: [
        { type: 'thinking', thinking: 'The user wants…', signature: 'abc' },
        { type: 'text', text: 'Let me ' },
        { type: 'text', text: 'check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
      ],
      stop_reason: 'tool_use',
    });
    expect(result.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
          reasoning_content: 'The user wants…',
        },
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('answers null content when there is no text, and keeps the id, model and raw body', () => {
    const body = { ...chatAnswer, content: [], stop_reason: 'max_tokens' };
    const result = map(body);
    expect(result.choices[0]!.message.content).toBeNull();
    expect(result.choices[0]!.finish_reason).toBe('length');
    expect(result).toMatchObject({ id: chatAnswer.id, model: chatAnswer.model, raw: body });
    expect(result.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 },
    });
  });

  it('rejects a tool_use block without an id', () => {
    expect(
      anthropicMessageSchema.safeParse({ content: [{ type: 'tool_use', name: 'f', input: {} }] }).success,
    ).toBe(false);
  });
});
