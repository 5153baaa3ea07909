import type { ChatCompletionChunk, CompletionResponse } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { chunkAnswer, wholeAnswer } from '../../testkit/src/cache-fixtures.ts';
import { answerAsChunks, answerAsResponse, chunksToResponse, responseToChunks } from './index.ts';

const frame = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk' as const,
  created: 1,
  model: 'gpt-4o-mini',
};

describe('answer conversion', () => {
  it('turns a whole answer into a stream and back, unchanged', () => {
    const { response } = wholeAnswer('Hello there.');
    const chunks = responseToChunks(response);
    expect(chunks).toEqual([
      {
        ...frame,
        id: 'chatcmpl-cached',
        created: 1_700_000_000,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello there.' }, finish_reason: null }],
      },
      {
        ...frame,
        id: 'chatcmpl-cached',
        created: 1_700_000_000,
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      },
      {
        ...frame,
        id: 'chatcmpl-cached',
        created: 1_700_000_000,
        choices: [],
        usage: response.usage,
        extra_fields: response.extra_fields,
      },
    ]);
    expect(chunksToResponse(chunks, 'openai')).toEqual(response);
  });

  it('assembles a stream: contents, tool call arguments and reasoning concatenated, last usage', () => {
    const chunks: ChatCompletionChunk[] = [
      {
        ...frame,
        choices: [
          { index: 0, delta: { role: 'assistant', reasoning_content: 'Think' }, finish_reason: null },
        ],
      },
      {
        ...frame,
        choices: [
          { index: 0, delta: { reasoning_content: 'ing.', content: 'Calling' }, finish_reason: null },
        ],
      },
      {
        ...frame,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'weather', arguments: '{"ci' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...frame,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] },
            finish_reason: null,
          },
        ],
      },
      { ...frame, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { ...frame, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
    ];
    const response: CompletionResponse = chunksToResponse(chunks, 'openai');
    expect(response).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Calling',
            reasoning_content: 'Thinking.',
            tool_calls: [
              {
                type: 'function',
                id: 'call_1',
                function: { name: 'weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      extra_fields: { provider: 'openai', model_params: {}, latency: 0 },
    });
    // A whole answer with tool calls streams them with their indexes, and comes back the same.
    expect(chunksToResponse(responseToChunks(response), 'openai')).toEqual(response);
  });

  it('keeps text completions text completions, and choices in index order', () => {
    const text: CompletionResponse = {
      id: 'cmpl-1',
      object: 'text_completion',
      created: 2,
      model: 'gpt-3.5-turbo-instruct',
      choices: [
        { index: 0, text: 'one', finish_reason: 'stop' },
        { index: 1, text: 'two', finish_reason: 'length' },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      extra_fields: { provider: 'openai', model_params: {}, latency: 0 },
    };
    const chunks = responseToChunks(text);
    expect(chunks.every((chunk) => chunk.object === 'text_completion')).toBe(true);
    expect(chunksToResponse([...chunks].reverse().reverse(), 'openai')).toEqual(text);
  });

  it('serves a stored answer either way', () => {
    const whole = wholeAnswer('x');
    const streamed = chunkAnswer(['a', 'b']);
    expect(answerAsResponse(whole, 'openai')).toBe(whole.response);
    expect(answerAsChunks(streamed)).toBe(streamed.chunks);
    expect(answerAsResponse(streamed, 'openai').choices[0]).toMatchObject({ message: { content: 'ab' } });
    expect(answerAsChunks(whole)).toHaveLength(3);
  });
});
