import {
  apiKeyOf,
  type FakePromptCache,
  type FakeProviderOptions,
  promptCacheOf,
} from './fake-prompt-cache.ts';
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
export function startFakeOpenAi(options: FakeProviderOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(openAiRoutes(promptCacheOf(options.promptCache)));
}

export type FakeOpenAi = FakeUpstream;

/** A chat completion's usage, as OpenAI reports it. */
export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export function chatCompletion(
  options: {
    content?: string | null;
    model?: string;
    toolCalls?: unknown[];
    finishReason?: string;
    usage?: OpenAiUsage;
  } = {},
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
    usage: options.usage ?? {
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 2 },
    },
  };
}

/** The chunks OpenAI streams for a short answer, with `include_usage`: role, content pieces, finish, usage. */
export function chatStreamEvents(
  options: { pieces?: string[]; model?: string; usage?: OpenAiUsage } = {},
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

/** Completion tokens of the fake's answers when it counts usage itself (a short answer). */
const ANSWER_TOKENS = 7;

/** OpenAI caches prefixes in steps of 128 tokens past the first 1024: what it reports cached is a multiple of 128. */
function openAiUsage(cache: FakePromptCache, request: FakeUpstreamRequest, blocks: unknown[]): OpenAiUsage {
  const read = cache.read(apiKeyOf(request.headers), blocks);
  return {
    prompt_tokens: read.promptTokens,
    completion_tokens: ANSWER_TOKENS,
    total_tokens: read.promptTokens + ANSWER_TOKENS,
    prompt_tokens_details: { cached_tokens: Math.floor(read.cachedTokens / 128) * 128 },
  };
}

/** A chat request's prompt as blocks of the cache: its tools, then its messages. */
function chatBlocks(request: FakeUpstreamRequest): unknown[] {
  const body = request.body as { tools?: unknown; messages?: unknown } | undefined;
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return body?.tools === undefined ? messages : [body.tools, ...messages];
}

function chatAnswer(request: FakeUpstreamRequest, cache: FakePromptCache | undefined): FakeUpstreamAnswer {
  const model = requestedModel(request);
  const usage = cache && openAiUsage(cache, request, chatBlocks(request));
  if (streamed(request)) return { events: chatStreamEvents({ model, ...(usage && { usage }) }) };
  return { json: chatCompletion({ model, ...(usage && { usage }) }) };
}

/** One SSE event of OpenAI's Responses API: `event:` naming the payload's type, then `data:`. */
function responsesEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A Responses API answer's usage, as OpenAI reports it. */
interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A Responses API answer of one text message (OpenAI's `/v1/responses`, whole). */
function responseObject(options: { model?: string; text?: string; usage?: ResponsesUsage } = {}) {
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
    usage: options.usage ?? {
      input_tokens: 11,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 17,
    },
  };
}

/** The same answer streamed as OpenAI streams it: created, the message item, its text, done, completed. */
export function responseStream(
  options: { model?: string; text?: string; usage?: ResponsesUsage } = {},
): string[] {
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

/** A Responses request's prompt as blocks of the cache: instructions, tools, then the input's items. */
function responsesBlocks(request: FakeUpstreamRequest): unknown[] {
  const body = request.body as { instructions?: unknown; tools?: unknown; input?: unknown } | undefined;
  const input = Array.isArray(body?.input) ? body.input : [body?.input];
  return [body?.instructions, body?.tools, ...input].filter((block) => block !== undefined);
}

function responsesAnswer(
  request: FakeUpstreamRequest,
  cache: FakePromptCache | undefined,
): FakeUpstreamAnswer {
  const model = requestedModel(request);
  const counted = cache && openAiUsage(cache, request, responsesBlocks(request));
  const usage = counted && {
    input_tokens: counted.prompt_tokens,
    input_tokens_details: { cached_tokens: counted.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: counted.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counted.total_tokens,
  };
  const options = { model, ...(usage && { usage }) };
  return streamed(request) ? { sse: responseStream(options) } : { json: responseObject(options) };
}

function openAiRoutes(cache: FakePromptCache | undefined): FakeRoute[] {
  return [
    { path: /(?<!\/chat)\/completions$/, answer: textCompletionAnswer },
    { path: /^\/v1\/responses$/, answer: (request) => responsesAnswer(request, cache) },
    // Every other path answers a chat completion: the OpenAI-compatible servers (Azure deployments, Ollama,
    // pass-through targets) put chat at paths of their own.
    { path: /./, answer: (request) => chatAnswer(request, cache) },
  ];
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
