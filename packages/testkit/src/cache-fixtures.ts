import type { ChatCompletionChunk, CompletionResponse } from '@gw/shared';

/** A whole chat answer as the router returns it, to store in a cache. */
export function wholeAnswer(content: string): { kind: 'whole'; response: CompletionResponse } {
  return {
    kind: 'whole',
    response: {
      id: 'chatcmpl-cached',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
      extra_fields: { provider: 'openai', model_params: {}, latency: 0.25 },
    },
  };
}

/** A streamed chat answer: a role chunk, one chunk per part, the finish, the usage. */
export function chunkAnswer(parts: string[]): { kind: 'chunks'; chunks: ChatCompletionChunk[] } {
  const frame = {
    id: 'chatcmpl-streamed',
    object: 'chat.completion.chunk' as const,
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
  };
  return {
    kind: 'chunks',
    chunks: [
      { ...frame, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      ...parts.map((content) => ({
        ...frame,
        choices: [{ index: 0, delta: { content }, finish_reason: null }],
      })),
      { ...frame, choices: [{ index: 0, delta: {}, finish_reason: 'stop' as const }] },
      {
        ...frame,
        choices: [],
        usage: { prompt_tokens: 5, completion_tokens: parts.length, total_tokens: 5 + parts.length },
      },
    ],
  };
}
