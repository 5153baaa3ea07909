import type { ChatCompletionChunk } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { ChatChunksToBlocks } from './chat-chunks-to-blocks.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) =>
  ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  }) as ChatCompletionChunk;

describe('ChatChunksToBlocks', () => {
  it('opens a text block at the first text, closes it when a tool call starts, one block per tool call', () => {
    const blocks = new ChatChunksToBlocks();
    const events = [
      ...blocks.push(chunk({ role: 'assistant', content: '' })),
      ...blocks.push(chunk({ content: 'Hi' })),
      ...blocks.push(
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x"' } }] }),
      ),
      ...blocks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })),
      ...blocks.push(
        chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }),
      ),
      ...blocks.push(chunk({}, 'tool_calls')),
      ...blocks.push({
        ...chunk({}),
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      }),
      ...blocks.end(),
    ];
    expect(events).toEqual([
      { type: 'block_start', index: 0, block: { type: 'text' } },
      { type: 'text_delta', index: 0, text: 'Hi' },
      { type: 'block_stop', index: 0, block: { type: 'text' }, text: 'Hi' },
      { type: 'block_start', index: 1, block: { type: 'tool_call', id: 'a', name: 'f' } },
      { type: 'arguments_delta', index: 1, arguments: '{"x"' },
      { type: 'arguments_delta', index: 1, arguments: ':1}' },
      { type: 'block_stop', index: 1, block: { type: 'tool_call', id: 'a', name: 'f' }, text: '{"x":1}' },
      { type: 'block_start', index: 2, block: { type: 'tool_call', id: 'b', name: 'g' } },
      { type: 'arguments_delta', index: 2, arguments: '{}' },
      { type: 'block_stop', index: 2, block: { type: 'tool_call', id: 'b', name: 'g' }, text: '{}' },
    ]);
    expect(blocks.finishReason).toBe('tool_calls');
    expect(blocks.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('closes what is open at the end and finishes with stop when no reason came', () => {
    const blocks = new ChatChunksToBlocks();
    blocks.push(chunk({ content: 'x' }));
    expect(blocks.end()).toEqual([{ type: 'block_stop', index: 0, block: { type: 'text' }, text: 'x' }]);
    expect(blocks.finishReason).toBe('stop');
  });

  it('reads text completions chunks (choices[].text)', () => {
    const blocks = new ChatChunksToBlocks();
    const events = blocks.push({ ...chunk({}), choices: [{ index: 0, text: 'Once', finish_reason: null }] });
    expect(events[1]).toEqual({ type: 'text_delta', index: 0, text: 'Once' });
  });
});
