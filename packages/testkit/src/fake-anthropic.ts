import {
  apiKeyOf,
  type FakePromptCache,
  type FakeProviderOptions,
  promptCacheOf,
} from './fake-prompt-cache.ts';
import {
  type FakeRoute,
  type FakeUpstreamAnswer,
  type FakeUpstreamRequest,
  startFakeUpstream,
} from './fake-upstream.ts';

/** One SSE event as Anthropic frames it: `event:` naming the payload's type, then `data:`. */
function anthropicEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A Messages answer's usage: `input_tokens` leaves out the tokens read from the cache and those written to it, as
 * Anthropic bills them.
 */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** The cache writes by how long they last (their sum is `cache_creation_input_tokens`). */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface AnthropicAnswerOptions {
  model?: string;
  text?: string;
  toolUse?: { id: string; name: string; input: Record<string, unknown> };
  usage?: AnthropicUsage;
}

/** A Messages API answer (anthropic-version 2023-06-01). */
export function anthropicMessage(options: AnthropicAnswerOptions = {}) {
  const content: unknown[] = [];
  if (options.text !== undefined || !options.toolUse)
    content.push({ type: 'text', text: options.text ?? 'Hello from Claude' });
  if (options.toolUse) content.push({ type: 'tool_use', ...options.toolUse });
  return {
    id: 'msg_fake_01',
    type: 'message',
    role: 'assistant',
    model: options.model ?? 'claude-opus-4-7',
    content,
    stop_reason: options.toolUse ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: options.usage ?? { input_tokens: 12, output_tokens: 6, cache_read_input_tokens: 0 },
  };
}

/** The events of a streamed Messages answer: text pieces, then optionally one tool call in two JSON pieces. */
export function anthropicStream(
  options: {
    model?: string;
    pieces?: string[];
    toolUse?: { id: string; name: string; json: string[] };
    usage?: AnthropicUsage;
  } = {},
): string[] {
  const pieces = options.pieces ?? ['Hel', 'lo', ' Claude'];
  const events = [
    anthropicEvent({
      type: 'message_start',
      message: {
        id: 'msg_fake_02',
        type: 'message',
        role: 'assistant',
        model: options.model ?? 'claude-opus-4-7',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: options.usage
          ? { ...options.usage, output_tokens: 1 }
          : { input_tokens: 10, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (pieces.length > 0) {
    events.push(
      anthropicEvent({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    );
    events.push(anthropicEvent({ type: 'ping' }));
    for (const text of pieces) {
      events.push(
        anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
      );
    }
    events.push(anthropicEvent({ type: 'content_block_stop', index }));
    index++;
  }
  if (options.toolUse) {
    events.push(
      anthropicEvent({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: options.toolUse.id, name: options.toolUse.name, input: {} },
      }),
    );
    for (const partial_json of options.toolUse.json) {
      events.push(
        anthropicEvent({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      );
    }
    events.push(anthropicEvent({ type: 'content_block_stop', index }));
  }
  events.push(
    anthropicEvent({
      type: 'message_delta',
      delta: { stop_reason: options.toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: options.usage?.output_tokens ?? 7 },
    }),
  );
  events.push(anthropicEvent({ type: 'message_stop' }));
  return events;
}

/** An Anthropic error answer. */
export function anthropicError(status: number, type: string, message: string): FakeUpstreamAnswer {
  return {
    status,
    json: { type: 'error', error: { type, message }, request_id: 'req_fake' },
    headers: status === 429 ? { 'retry-after': '0' } : {},
  };
}

/** Output tokens of the fake's answers when it counts usage itself. */
const ANSWER_TOKENS = 6;

/** A Messages request's prompt as blocks of the cache, in the order Anthropic caches them: tools, system, messages. */
function messagesBlocks(body: { tools?: unknown; system?: unknown; messages?: unknown }): unknown[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return [body.tools, body.system, ...messages].filter((block) => block !== undefined);
}

function messagesAnswer(
  request: FakeUpstreamRequest,
  cache: FakePromptCache | undefined,
): FakeUpstreamAnswer {
  const body = (request.body ?? {}) as {
    stream?: boolean;
    model?: string;
    tools?: unknown;
    system?: unknown;
    messages?: unknown;
  };
  const read = cache?.read(apiKeyOf(request.headers), messagesBlocks(body));
  const options = {
    ...(body.model && { model: body.model }),
    ...(read && {
      usage: {
        input_tokens: read.promptTokens - read.cachedTokens,
        output_tokens: ANSWER_TOKENS,
        cache_read_input_tokens: read.cachedTokens,
      },
    }),
  };
  if (body.stream) return { sse: anthropicStream(options) };
  return { json: anthropicMessage(options) };
}

const anthropicRoutes = (cache: FakePromptCache | undefined): FakeRoute[] => [
  { path: /^\/v1\/messages\/count_tokens/, answer: () => ({ json: { input_tokens: 42 } }) },
  {
    path: /^\/v1\/models/,
    answer: () => ({
      json: { data: [{ type: 'model', id: 'claude-opus-4-7', display_name: 'Claude' }], has_more: false },
    }),
  },
  // Every other path answers a message: Vertex and pass-through targets put the Messages API at paths of
  // their own.
  { path: /./, answer: (request) => messagesAnswer(request, cache) },
];

/** A fake Anthropic Messages API on loopback (real wire format), recording what gw sent. */
export function startFakeAnthropic(options: FakeProviderOptions = {}) {
  return startFakeUpstream(anthropicRoutes(promptCacheOf(options.promptCache)));
}
