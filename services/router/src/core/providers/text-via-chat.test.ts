import type { ChatCompletionChunk } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { type AdapterContext, type ChatInput, chunkOf, type ProviderAdapter } from './adapter.ts';
import { withTextViaChat } from './text-via-chat.ts';

const context = {} as AdapterContext;
const chunk = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletionChunk['usage']) => ({
  id: 'c1',
  object: 'chat.completion.chunk' as const,
  created: 1,
  model: 'm',
  choices,
  ...(usage ? { usage } : {}),
});

/** A chat-only adapter that answers each prompt with its reverse, so choices can be told apart. */
const chatOnly: ProviderAdapter = {
  capabilities: {
    operations: ['chat', 'chat_stream'],
    tools: false,
    vision: false,
    textViaChat: false,
    authOptional: false,
    requiresBaseUrl: false,
  },
  async chat(input: ChatInput) {
    const prompt = String(input.messages[0]?.content);
    return {
      id: `chat-${prompt}`,
      created: 1,
      model: input.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: [...prompt].reverse().join('') },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      raw: { prompt, params: input.params },
    };
  },
  async *chatStream() {
    yield chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    yield chunk([{ index: 0, delta: { content: 'Once' }, finish_reason: null }]);
    yield chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    yield chunk([], { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
  },
};

describe('withTextViaChat', () => {
  const adapter = withTextViaChat(chatOnly);

  it('declares the text operations it adds', () => {
    expect(adapter.capabilities.operations).toEqual(['chat', 'chat_stream', 'text', 'text_stream']);
    expect(adapter.capabilities.textViaChat).toBe(true);
  });

  it('answers each prompt of a list as its own choice, summing usage, without text-only params', async () => {
    const result = await adapter.text!(
      { model: 'm', prompt: ['ab', 'cd'], params: { max_tokens: 5, echo: true } },
      context,
    );
    expect(result.choices).toEqual([
      { index: 0, text: 'ba', finish_reason: 'stop' },
      { index: 1, text: 'dc', finish_reason: 'stop' },
    ]);
    expect(result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 });
    expect(result.raw).toEqual([
      { prompt: 'ab', params: { max_tokens: 5 } },
      { prompt: 'cd', params: { max_tokens: 5 } },
    ]);
  });

  it('streams text_completion chunks, leaving out the role-only chunk', async () => {
    const chunks: ChatCompletionChunk[] = [];
    for await (const piece of adapter.textStream!({ model: 'm', prompt: 'x', params: {} }, context))
      chunks.push(chunkOf(piece));
    expect(chunks.map((item) => [item.object, item.choices])).toEqual([
      ['text_completion', [{ index: 0, text: 'Once', finish_reason: null }]],
      ['text_completion', [{ index: 0, text: '', finish_reason: 'stop' }]],
      ['text_completion', []],
    ]);
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
  });

  it('refuses to stream several prompts at once', async () => {
    const stream = adapter.textStream!({ model: 'm', prompt: ['a', 'b'], params: {} }, context);
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      status: 400,
      param: 'prompt',
    });
  });
});
