import { type FakeUpstream, type FakeUpstreamAnswer, startFakeUpstream } from './fake-upstream.ts';

/** What the fake received (the one recorder's record). */

/**
 * A fake OpenAI upstream on loopback that speaks the real wire format: the one recorder with OpenAI's default
 * answers (an echo of the request's model and last message).
 */
export function startFakeOpenAi(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => defaultAnswer(request.path, request.body as Record<string, unknown>));
}

export type FakeOpenAi = FakeUpstream;

export function chatCompletion(
  options: { content?: string | null; model?: string; toolCalls?: unknown[]; finishReason?: string } = {},
) {
  return {
    id: 'chatcmpl-fake-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.content === undefined ? 'Hello from the fake upstream' : options.content,
          ...(options.toolCalls ? { tool_calls: options.toolCalls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: options.finishReason ?? (options.toolCalls ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 2 },
    },
  };
}

/** The chunks OpenAI streams for a short answer, with `include_usage`: role, content pieces, finish, usage. */
export function chatStreamEvents(options: { pieces?: string[]; model?: string } = {}): string[] {
  const base = {
    id: 'chatcmpl-fake-2',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
  };
  const pieces = options.pieces ?? ['Hel', 'lo', ' wörld'];
  return [
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      usage: null,
    }),
    ...pieces.map((piece) =>
      JSON.stringify({
        ...base,
        choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
        usage: null,
      }),
    ),
    JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
    JSON.stringify({
      ...base,
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    }),
    '[DONE]',
  ];
}

function defaultAnswer(path: string, body: Record<string, unknown> | undefined): FakeUpstreamAnswer {
  const model = typeof body?.['model'] === 'string' ? body['model'] : 'gpt-4o-mini';
  if (path.endsWith('/completions') && !path.endsWith('/chat/completions')) {
    if (body?.['stream']) {
      const base = { id: 'cmpl-fake', object: 'text_completion', created: 1_700_000_000, model };
      return {
        events: [
          JSON.stringify({ ...base, choices: [{ index: 0, text: 'Once', finish_reason: null }] }),
          JSON.stringify({ ...base, choices: [{ index: 0, text: ' upon', finish_reason: 'stop' }] }),
          JSON.stringify({
            ...base,
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
          '[DONE]',
        ],
      };
    }
    return {
      json: {
        id: 'cmpl-fake',
        object: 'text_completion',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, text: 'Once upon a time', finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      },
    };
  }
  if (body?.['stream']) return { events: chatStreamEvents({ model }) };
  return { json: chatCompletion({ model }) };
}

/**
 * The chunks OpenAI streams for one tool call whose arguments arrive in `fragments` (the first rides on
 * the delta that opens the call), optionally after some text, then the finish and usage chunks.
 */
export function toolCallStreamEvents(options: {
  id?: string;
  model?: string;
  text?: string;
  callId: string;
  name: string;
  fragments: string[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}): string[] {
  const base = {
    id: options.id ?? 'chatcmpl-tools',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
  };
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const [first = '', ...rest] = options.fragments;
  const opening = {
    index: 0,
    id: options.callId,
    type: 'function',
    function: { name: options.name, arguments: first },
  };
  return [
    ...(options.text !== undefined ? [chunk({ role: 'assistant', content: options.text })] : []),
    chunk({ ...(options.text === undefined ? { role: 'assistant' } : {}), tool_calls: [opening] }),
    ...rest.map((fragment) => chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
    chunk({}, 'tool_calls'),
    ...(options.usage ? [JSON.stringify({ ...base, choices: [], usage: options.usage })] : []),
    '[DONE]',
  ];
}
