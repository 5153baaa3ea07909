import { describe, expect, it } from 'vitest';
import { estimateTokens } from './estimate-tokens.ts';

describe('estimateTokens', () => {
  it("counts a short chat near OpenAI's count of it (16 tokens for these two turns), not its JSON", () => {
    const estimate = estimateTokens([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(estimate).toBe(17);
  });

  it('counts an image at a typical image’s tokens whatever its base64 length, less at low detail', () => {
    const image = (detail?: string) =>
      estimateTokens([
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
    const bare = estimateTokens([{ role: 'user', content: 'Weather?' }]);
    expect(estimateTokens([{ role: 'user', content: 'Weather?' }], tools)).toBe(
      bare + Math.ceil(JSON.stringify(tools).length / 4),
    );
    expect(
      estimateTokens([
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
});
