import {
  type FakeRoute,
  type FakeUpstream,
  type FakeUpstreamAnswer,
  type FakeUpstreamRequest,
  startFakeUpstream,
} from './fake-upstream.ts';

/**
 * A fake OpenAI upstream on loopback that speaks the real wire format: the one recorder with OpenAI's routes
 * (answers that echo the request's model).
 */
export function startFakeOpenAi(): Promise<FakeUpstream> {
  return startFakeUpstream(OPENAI_ROUTES);
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
export function chatStreamEvents(
  options: {
    pieces?: string[];
    model?: string;
    usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  } = {},
): string[] {
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
      usage: options.usage ?? { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    }),
    '[DONE]',
  ];
}

function requestedModel(request: FakeUpstreamRequest): string {
  const model = (request.body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : 'gpt-4o-mini';
}

function streamed(request: FakeUpstreamRequest): boolean {
  return Boolean((request.body as { stream?: unknown } | undefined)?.stream);
}

function textCompletionAnswer(request: FakeUpstreamRequest): FakeUpstreamAnswer {
  const base = {
    id: 'cmpl-fake',
    object: 'text_completion',
    created: 1_700_000_000,
    model: requestedModel(request),
  };
  if (streamed(request)) {
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
      ...base,
      choices: [{ index: 0, text: 'Once upon a time', finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    },
  };
}

function chatAnswer(request: FakeUpstreamRequest): FakeUpstreamAnswer {
  const model = requestedModel(request);
  if (streamed(request)) return { events: chatStreamEvents({ model }) };
  return { json: chatCompletion({ model }) };
}

/** One SSE event of OpenAI's Responses API: `event:` naming the payload's type, then `data:`. */
function responsesEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A Responses API answer of one text message (OpenAI's `/v1/responses`, whole). */
function responseObject(options: { model?: string; text?: string } = {}) {
  return {
    id: 'resp_fake_01',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model: options.model ?? 'gpt-4o',
    output: [
      {
        id: 'msg_fake_01',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: options.text ?? 'Hello from the fake Responses API', annotations: [] },
        ],
      },
    ],
    usage: {
      input_tokens: 11,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 17,
    },
  };
}

/** The same answer streamed as OpenAI streams it: created, the message item, its text, done, completed. */
export function responseStream(options: { model?: string; text?: string } = {}): string[] {
  const response = responseObject(options);
  const message = response.output[0]!;
  const text = message.content[0]!.text;
  return [
    responsesEvent({
      type: 'response.created',
      sequence_number: 0,
      response: { ...response, status: 'in_progress', output: [] },
    }),
    responsesEvent({
      type: 'response.output_item.added',
      sequence_number: 1,
      output_index: 0,
      item: { ...message, status: 'in_progress', content: [] },
    }),
    responsesEvent({
      type: 'response.output_text.delta',
      sequence_number: 2,
      item_id: message.id,
      output_index: 0,
      content_index: 0,
      delta: text,
    }),
    responsesEvent({ type: 'response.output_item.done', sequence_number: 3, output_index: 0, item: message }),
    responsesEvent({ type: 'response.completed', sequence_number: 4, response }),
  ];
}

function responsesAnswer(request: FakeUpstreamRequest): FakeUpstreamAnswer {
  const model = requestedModel(request);
  return streamed(request) ? { sse: responseStream({ model }) } : { json: responseObject({ model }) };
}

const OPENAI_ROUTES: FakeRoute[] = [
  { path: /(?<!\/chat)\/completions$/, answer: textCompletionAnswer },
  { path: /^\/v1\/responses$/, answer: responsesAnswer },
  // Every other path answers a chat completion: the OpenAI-compatible servers (Azure deployments, Ollama,
  // pass-through targets) put chat at paths of their own.
  { path: /./, answer: chatAnswer },
];

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
