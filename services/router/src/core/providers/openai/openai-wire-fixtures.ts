/**
 * Test fixtures: answers in the OpenAI wire format (chat completions, legacy completions, embeddings) as
 * OpenAI and the compatible servers send them. The servers differ in small, observed ways, which `style`
 * names, so every provider's contract test replays its own true format without copying the others.
 */

export interface OpenAiWireStyle {
  model: string;
  /** Fields the provider adds to every answer and chunk (system_fingerprint, x_groq…). */
  extra?: Record<string, unknown>;
  /** Fields the provider adds to non-streamed answers only (azure's prompt_filter_results). */
  answerExtra?: Record<string, unknown>;
  /**
   * Where a stream reports usage: a last chunk with `choices: []` (OpenAI with include_usage, azure,
   * ollama, sglang), on the finish chunk (mistral), or in `x_groq.usage` on the finish chunk (groq).
   */
  streamUsage?: 'usage-chunk' | 'finish-chunk' | 'x-groq';
  /** Tool calls stream as an opening plus argument fragments (OpenAI, sglang) or whole in one delta. */
  streamToolCall?: 'fragments' | 'whole';
  /** Chunks before the first choice (azure's prompt filter results). */
  preamble?: object[];
  /** The provider's error body for a 400 'bad things happened'. */
  errorBody?: object;
  /** The provider's own tool call id format. */
  toolCallId?: string;
}

const CREATED = 1_731_000_000;

/** One SSE event per chunk, each `data: <json>` plus a blank line, then `data: [DONE]`. */
export function sseLines(chunks: object[]): string[] {
  return [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'];
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The standard answers of the provider contract in one provider's OpenAI-format style. */
export function openAiWireFixtures(style: OpenAiWireStyle) {
  const extra = style.extra ?? {};
  const answerExtra = { ...extra, ...style.answerExtra };
  const toolCallId = style.toolCallId ?? 'call_DdmO9pD3xa9XTPNJ32zg2hcA';
  const chatBase = {
    id: 'chatcmpl-AXk1pWb3J7',
    object: 'chat.completion',
    created: CREATED,
    model: style.model,
  };
  const chunkBase = {
    id: 'chatcmpl-AXk1pWb3J8',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: style.model,
  };

  const chat = {
    ...chatBase,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello there', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { ...usage(10, 5), prompt_tokens_details: { cached_tokens: 2 } },
    ...answerExtra,
  };

  const chatTools = {
    ...chatBase,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: toolCallId,
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    usage: usage(20, 8),
    ...answerExtra,
  };

  /** A stream of deltas ending with the finish reason, and usage where this provider reports it. */
  function stream(deltas: object[], finishReason: string, totals: ReturnType<typeof usage>): string[] {
    const chunk = (delta: object, finish: string | null) => ({
      ...chunkBase,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...extra,
    });
    const finish = chunk({}, finishReason);
    const chunks: object[] = [...(style.preamble ?? []), ...deltas.map((delta) => chunk(delta, null))];
    switch (style.streamUsage ?? 'usage-chunk') {
      case 'usage-chunk':
        chunks.push(finish, { ...chunkBase, choices: [], usage: totals, ...extra });
        break;
      case 'finish-chunk':
        chunks.push({ ...finish, usage: totals });
        break;
      case 'x-groq':
        chunks.push({ ...finish, x_groq: { id: 'req_01jbd6g2qdfw2adyrt2az8hz4w', usage: totals } });
        break;
    }
    return sseLines(chunks);
  }

  const chatStream = stream(
    [{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo th' }, { content: 'ére' }],
    'stop',
    usage(10, 5),
  );

  const toolDeltas =
    (style.streamToolCall ?? 'fragments') === 'fragments'
      ? [
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                index: 0,
                id: toolCallId,
                type: 'function',
                function: { name: 'get_weather', arguments: '' },
              },
            ],
          },
          { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] },
          { tool_calls: [{ index: 0, function: { arguments: 'ty":"Pa' } }] },
          { tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] },
        ]
      : [
          { role: 'assistant', content: '' },
          {
            tool_calls: [
              {
                index: 0,
                id: toolCallId,
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
        ];
  const chatStreamTools = stream(toolDeltas, 'tool_calls', usage(20, 8));

  const text = {
    id: 'cmpl-AXk1pWb3J9',
    object: 'text_completion',
    created: CREATED,
    model: style.model,
    choices: [{ text: 'Once upon', index: 0, logprobs: null, finish_reason: 'stop' }],
    usage: usage(3, 2),
    ...answerExtra,
  };

  const textChunk = (piece: string, finish: string | null) => ({
    id: 'cmpl-AXk1pWb3K0',
    object: 'text_completion',
    created: CREATED,
    model: style.model,
    choices: [{ text: piece, index: 0, logprobs: null, finish_reason: finish }],
    ...extra,
  });
  const textStream = sseLines([
    textChunk('Once', null),
    textChunk(' upon', null),
    textChunk('', 'stop'),
    { ...textChunk('', null), choices: [], usage: usage(3, 2) },
  ]);

  const embeddings = {
    object: 'list',
    data: [
      { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
      { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
    ],
    model: style.model,
    usage: { prompt_tokens: 2, total_tokens: 2 },
  };

  const error = style.errorBody ?? {
    error: { message: 'bad things happened', type: 'invalid_request_error', param: null, code: null },
  };

  return {
    /** The raw answers, for unit tests. */
    bodies: { chat, chatTools, chatStream, chatStreamTools, text, textStream, embeddings, error },
    /** Ready for runProviderContract's `upstream`. */
    upstream: {
      chat: () => ({ body: chat }),
      chatTools: () => ({ body: chatTools }),
      chatStream: () => ({ chunks: chatStream }),
      chatStreamTools: () => ({ chunks: chatStreamTools }),
      error: () => ({ status: 400, body: error }),
      text: () => ({ body: text }),
      textStream: () => ({ chunks: textStream }),
      embeddings: () => ({ body: embeddings }),
    },
  };
}

/** A chat answer with the text of the text contract case, for providers serving text through chat. */
export function textViaChatAnswer(style: OpenAiWireStyle) {
  const { chat } = openAiWireFixtures(style).bodies;
  return {
    ...chat,
    choices: [{ ...chat.choices[0]!, message: { role: 'assistant', content: 'Once upon', refusal: null } }],
    usage: usage(3, 2),
  };
}
