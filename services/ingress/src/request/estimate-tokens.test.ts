import type { Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { estimateOf } from './estimate-tokens.ts';
import { parseChatRequest } from './parse-request.ts';

/** The prompt tokens of a chat of these messages (and tools). */
const chatTokens = (messages: Message[], tools?: unknown[]) =>
  estimateOf({ operation: 'chat', messages, params: tools ? { tools } : {} }).promptTokens;

describe('estimateOf', () => {
  it("counts a short chat near OpenAI's count of it (16 tokens for these two turns), not its JSON", () => {
    const estimate = chatTokens([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(estimate).toBe(17);
  });

  it('counts an image at a typical image’s tokens whatever its base64 length, less at low detail', () => {
    const image = (detail?: string) =>
      chatTokens([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(400_000)}`, detail } },
          ],
        },
      ]);
    expect(image()).toBe(3 + 4 + 4 + 765);
    expect(image('low')).toBe(3 + 4 + 4 + 85);
  });

  it('counts tool calls by their name and arguments and tool definitions by their JSON', () => {
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
    const bare = chatTokens([{ role: 'user', content: 'Weather?' }]);
    expect(chatTokens([{ role: 'user', content: 'Weather?' }], tools)).toBe(
      bare + Math.ceil(JSON.stringify(tools).length / 4),
    );
    expect(
      chatTokens([
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { type: 'function', id: 'c1', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          ],
        },
      ]),
    ).toBe(3 + 4 + 2 + 4);
  });

  it('counts a text prompt and the texts to embed by their characters', () => {
    expect(estimateOf({ operation: 'text', prompt: 'Once upon a time', params: {} }).promptTokens).toBe(4);
    // Five characters (ten UTF-8 bytes) are two tokens; each text is rounded up on its own.
    expect(estimateOf({ operation: 'embeddings', input: ['abcd', 'ééééé'], params: {} }).promptTokens).toBe(
      1 + 2,
    );
  });

  it('says what the answer may use and how many answers are paid for', () => {
    const parsed = parseChatRequest({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
      params: { max_tokens: 9 },
    });
    expect(estimateOf(parsed)).toEqual({ promptTokens: 3 + 4 + 1, maxCompletionTokens: 9 });
    const several = parseChatRequest({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }], n: 4 });
    expect(estimateOf(several)).toEqual({
      promptTokens: 3 + 4 + 1,
      maxCompletionTokens: undefined,
      choices: 4,
    });
  });
});
