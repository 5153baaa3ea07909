import {
  type ChatChoice,
  type ChatCompletionChunk,
  type FinishReason,
  frameSseEvent,
  GatewayError,
  type SseEvent,
  type ToolCall,
  type Usage,
} from '@gw/shared';
import { z } from 'zod';
import { type AdapterResult, NativePiece } from '../adapter.ts';
import { invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';

// OpenAI's Responses API, as far as gw reads it: what an answer says in chat terms (text, function calls,
// usage) while the answer itself goes back to the caller untouched.

const responsesUsageSchema = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  total_tokens: z.number().optional(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  output_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
});

const outputItemSchema = z.looseObject({
  type: z.string(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
});

export const responseObjectSchema = z.looseObject({
  id: z.string(),
  created_at: z.number().optional(),
  model: z.string().optional(),
  status: z.string().nullish(),
  output: z.array(outputItemSchema),
  usage: responsesUsageSchema.nullish(),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});

type ResponseObject = z.infer<typeof responseObjectSchema>;

function mapUsage(usage: ResponseObject['usage']): Usage {
  if (!usage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const mapped: Usage = {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
  };
  const cached = usage.input_tokens_details?.cached_tokens;
  if (typeof cached === 'number') mapped.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') mapped.completion_tokens_details = { reasoning_tokens: reasoning };
  return mapped;
}

function finishReason(response: ResponseObject, calledTools: boolean): FinishReason {
  if (calledTools) return 'tool_calls';
  if (response.status !== 'incomplete') return 'stop';
  return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
}

/** A Responses answer in chat terms: its output text, function calls and usage. */
export function mapResponsesAnswer(
  response: ResponseObject,
  options: { raw: unknown; model: string },
): AdapterResult<ChatChoice> {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of response.output) {
    if (item.type === 'message') {
      for (const part of item.content ?? []) if (part.type === 'output_text') texts.push(part.text ?? '');
    } else if (item.type === 'function_call') {
      toolCalls.push({
        id: item.call_id ?? '',
        type: 'function',
        function: { name: item.name ?? '', arguments: item.arguments ?? '' },
      });
    }
  }
  const message: ChatChoice['message'] = { role: 'assistant', content: texts.length ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: response.id,
    created: response.created_at ?? Math.floor(Date.now() / 1000),
    model: response.model || options.model,
    choices: [{ index: 0, message, finish_reason: finishReason(response, toolCalls.length > 0) }],
    usage: mapUsage(response.usage),
    raw: options.raw,
  };
}

function failure(provider: string, response: ResponseObject | undefined, body: unknown): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: 502,
    message: response?.error?.message ?? `${provider} stream failed`,
    code: response?.error?.code ?? undefined,
    upstream: true,
    upstreamBody: body,
    provider,
  });
}

const streamEventSchema = z.looseObject({
  type: z.string(),
  delta: z.string().optional(),
  output_index: z.number().optional(),
  item: outputItemSchema.optional(),
  response: responseObjectSchema.optional(),
  message: z.string().optional(),
});

/**
 * The events of a Responses stream relayed verbatim, each with its chat translation: text deltas, function
 * calls (numbered by their order among calls), and the finish with usage from `response.completed`.
 */
export async function* relayResponsesStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string; model: string },
): AsyncGenerator<NativePiece> {
  let id = '';
  let model = options.model;
  const created = Math.floor(Date.now() / 1000);
  /** Output index → tool call ordinal. */
  const calls = new Map<number, number>();
  let finished = false;
  const chunk = (delta: Record<string, unknown> | undefined, extra: Partial<ChatCompletionChunk> = {}) => ({
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    choices: delta ? [{ index: 0, delta, finish_reason: null }] : [],
    ...extra,
  });

  for await (const sseEvent of events) {
    const parsed = streamEventSchema.safeParse(parseEventJson(options.provider, sseEvent.data));
    if (!parsed.success) throw invalidUpstreamBody(options.provider, 'stream carried a malformed event');
    const event = parsed.data;
    let translated: ChatCompletionChunk;
    switch (event.type) {
      case 'response.created':
        id = event.response?.id ?? id;
        model = event.response?.model || model;
        translated = chunk({ role: 'assistant' });
        break;
      case 'response.output_text.delta':
        translated = chunk(event.delta ? { content: event.delta } : undefined);
        break;
      case 'response.output_item.added':
        if (event.item?.type === 'function_call' && event.output_index !== undefined) {
          const index = calls.size;
          calls.set(event.output_index, index);
          translated = chunk({
            tool_calls: [
              {
                index,
                id: event.item.call_id,
                type: 'function',
                function: { name: event.item.name, arguments: '' },
              },
            ],
          });
        } else translated = chunk(undefined);
        break;
      case 'response.function_call_arguments.delta': {
        const index = event.output_index === undefined ? undefined : calls.get(event.output_index);
        translated =
          index === undefined || !event.delta
            ? chunk(undefined)
            : chunk({ tool_calls: [{ index, function: { arguments: event.delta } }] });
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        finished = true;
        const response = event.response;
        translated = chunk(undefined, {
          choices: [
            {
              index: 0,
              delta: {},
              finish_reason: response ? finishReason(response, calls.size > 0) : 'stop',
            },
          ],
          usage: mapUsage(response?.usage),
        });
        break;
      }
      case 'response.failed':
        throw failure(options.provider, event.response, event);
      case 'error':
        throw new GatewayError({
          type: 'upstream_error',
          status: 502,
          message: event.message ?? `${options.provider} stream failed`,
          upstream: true,
          upstreamBody: event,
          provider: options.provider,
        });
      default:
        translated = chunk(undefined);
    }
    yield new NativePiece(translated, frameSseEvent(sseEvent));
  }
  if (!finished) throw invalidUpstreamBody(options.provider, 'stream ended before response.completed');
}
