import type { ChatChoice } from '@gw/shared';
import {
  type AdapterContext,
  type AdapterResult,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type EmbeddingsInput,
  type EmbeddingsResult,
  type ProviderAdapter,
} from '../adapter.ts';
import { bearerAuth } from '../openai/openai-adapter.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { callJson, callSse, type UpstreamCall } from '../upstream-call.ts';
import { buildCohereChatBody } from './build-cohere-chat-body.ts';
import { cohereGenerationError, readCohereErrorMessage } from './cohere-error.ts';
import {
  type CohereChatResponse,
  cohereChatResponseSchema,
  cohereEmbedResponseSchema,
} from './cohere-schemas.ts';
import { translateCohereStream } from './cohere-stream.ts';
import { isCohereFailure, mapCohereFinishReason } from './map-cohere-finish-reason.ts';
import { mapCohereUsage } from './map-cohere-usage.ts';

function post(path: string, body: Record<string, unknown>, context: AdapterContext): UpstreamCall {
  return {
    path,
    headers: { 'content-type': 'application/json', ...bearerAuth(context) },
    body: JSON.stringify(body),
  };
}

function toChatChoice(response: CohereChatResponse): ChatChoice {
  const { message } = response;
  // `thinking` parts of reasoning models and the `tool_plan` that precedes tool calls stay in `raw`.
  const texts = (message.content ?? []).filter((part) => part.type === 'text').map((part) => part.text ?? '');
  const toolCalls = (message.tool_calls ?? []).map((call) => ({
    id: call.id,
    type: 'function' as const,
    // Cohere answers `null` arguments for a tool without parameters.
    function: { name: call.function.name, arguments: call.function.arguments || '{}' },
  }));
  return {
    index: 0,
    message: {
      role: 'assistant',
      content: texts.length > 0 ? texts.join('') : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    finish_reason: mapCohereFinishReason(response.finish_reason) ?? 'stop',
  };
}

async function chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
  const { raw, parsed } = await callJson(context, post('/v2/chat', buildCohereChatBody(input), context), {
    schema: cohereChatResponseSchema,
    readMessage: readCohereErrorMessage,
  });
  if (isCohereFailure(parsed.finish_reason)) {
    throw cohereGenerationError({
      provider: context.provider,
      message: `${context.provider} ended the generation with ${parsed.finish_reason}`,
      body: raw,
    });
  }
  return {
    id: parsed.id,
    // Cohere's answer names neither a time nor the model.
    created: Math.floor(Date.now() / 1000),
    model: input.model,
    choices: [toChatChoice(parsed)],
    usage: mapCohereUsage(parsed.usage),
    raw,
  };
}

function chatStream(input: ChatInput, context: AdapterContext) {
  const body = { ...buildCohereChatBody(input), stream: true };
  const events = callSse(context, post('/v2/chat', body, context), readCohereErrorMessage);
  return translateCohereStream(events, { provider: context.provider, model: input.model });
}

/** What Cohere embeds for when the caller does not say: OpenAI's embeddings are for stored documents too. */
const DEFAULT_INPUT_TYPE = 'search_document';

async function embeddings(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult> {
  // gw answers floats; OpenAI's encoding_format and user have no Cohere counterpart, dimensions does.
  const { input_type, dimensions, encoding_format, user, ...rest } = input.params;
  const body: Record<string, unknown> = {
    ...rest,
    model: input.model,
    texts: typeof input.input === 'string' ? [input.input] : input.input,
    input_type: input_type ?? DEFAULT_INPUT_TYPE,
    embedding_types: ['float'],
  };
  if (dimensions !== undefined) body['output_dimension'] = dimensions;
  const { raw, parsed } = await callJson(context, post('/v2/embed', body, context), {
    schema: cohereEmbedResponseSchema,
    readMessage: readCohereErrorMessage,
  });
  const promptTokens = parsed.meta?.billed_units?.input_tokens ?? 0;
  return {
    model: input.model,
    data: parsed.embeddings.float.map((embedding, index) => ({ index, embedding })),
    usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
    raw,
  };
}

/**
 * Cohere's v2 API (https://docs.cohere.com/reference/chat, /reference/embed). Cohere has no text
 * completions endpoint: text and text_stream are served by chat through the shared helper.
 */
export const cohereAdapter: ProviderAdapter = withTextViaChat({
  capabilities: { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream', 'embeddings'] },
  chat,
  chatStream,
  embeddings,
});
