import type { ChatCompletionChunk, Usage } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { chatChunksToAnthropicObjects } from './chat-chunks-to-anthropic-events.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Usage) => ({
  chunk: {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  } as ChatCompletionChunk,
});

/** A prompt gw estimates at 17 tokens (estimate-tokens.test.ts). */
const PROMPT = {
  operation: 'chat' as const,
  messages: [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: 'Say hello' },
  ],
  params: {},
};

/** Every usage the translated stream states, in order: `message_start`'s, then `message_delta`'s. */
function usages(options: { finalUsage?: Usage }) {
  const objects = chatChunksToAnthropicObjects({ requestId: 'req-1', prompt: PROMPT });
  const events = [
    ...objects.push(chunk({ role: 'assistant', content: 'Hi' })),
    ...objects.push(chunk({}, 'stop')),
    ...(options.finalUsage ? objects.push(chunk({}, null, options.finalUsage)) : []),
    ...objects.end(),
  ];
  return events.flatMap((event) => {
    if (event.type === 'message_start') return [(event['message'] as { usage: unknown }).usage];
    if (event.type === 'message_delta') return [event['usage']];
    return [];
  });
}

describe('chatChunksToAnthropicObjects', () => {
  it("announces gw's estimate of the input tokens in message_start and the provider's figures in message_delta", () => {
    expect(
      usages({
        finalUsage: {
          prompt_tokens: 15,
          completion_tokens: 3,
          total_tokens: 18,
          prompt_tokens_details: { cached_tokens: 4 },
        },
      }),
    ).toEqual([
      { input_tokens: 17, output_tokens: 0 },
      { input_tokens: 11, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 4 },
    ]);
  });

  it('leaves the estimate standing in message_delta when the provider reported no usage', () => {
    expect(usages({})).toEqual([
      { input_tokens: 17, output_tokens: 0 },
      { input_tokens: 17, output_tokens: 0 },
    ]);
  });
});
