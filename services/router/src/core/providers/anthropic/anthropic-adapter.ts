import type { ChatChoice, ChatCompletionChunk } from '@gw/shared';
import type { NativeFormat } from '../../router-service.ts';
import {
  type AdapterContext,
  type AdapterResult,
  type Capabilities,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type NativeChatInput,
  type NativePiece,
  type ProviderAdapter,
} from '../adapter.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { callJson, callSse, type UpstreamCall } from '../upstream-call.ts';
import { readAnthropicErrorMessage } from './anthropic-error.ts';
import { anthropicMessageSchema } from './anthropic-schemas.ts';
import { type AnthropicRequestBody, convertToAnthropicRequest } from './convert-to-anthropic-request.ts';
import { mapAnthropicResponse } from './map-anthropic-response.ts';
import { mapAnthropicStream, relayAnthropicStream } from './map-anthropic-stream.ts';

/** The Messages API version gw speaks; the wire format below is this version's. */
const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicAdapterOptions {
  /**
   * Path of a Messages call relative to the base URL (default `/v1/messages`). Claude on Vertex names the
   * model in the path and streams from another method (`:rawPredict` / `:streamRawPredict`).
   */
  path?: (model: string, context: AdapterContext, stream: boolean) => Pick<UpstreamCall, 'path' | 'query'>;
  /** Auth and version headers (default `x-api-key` and `anthropic-version`); may fetch a token first. */
  headers?: (context: AdapterContext) => Record<string, string> | Promise<Record<string, string>>;
  /** Last touch on the body before it is sent (Vertex drops `model` and adds `anthropic_version`). */
  adjustBody?: (body: AnthropicRequestBody, context: AdapterContext) => Record<string, unknown>;
  /** Capabilities before text completions are added (they are always served by chat). */
  capabilities?: Capabilities;
}

function anthropicHeaders(context: AdapterContext): Record<string, string> {
  return {
    ...(context.key?.value ? { 'x-api-key': context.key.value } : {}),
    'anthropic-version': ANTHROPIC_VERSION,
  };
}

const ANTHROPIC_CAPABILITIES: Capabilities = { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream'] };

/**
 * The Anthropic Messages wire format. Anthropic itself is this adapter with its defaults; Claude on Vertex
 * reuses it by overriding the path, the auth headers and the body. Anthropic has no text completions
 * endpoint, so text and text streams run over chat.
 */
export function createAnthropicAdapter(options: AnthropicAdapterOptions = {}) {
  const resolvePath = options.path ?? (() => ({ path: '/v1/messages' }));
  const headers = options.headers ?? anthropicHeaders;
  const adjust = options.adjustBody ?? ((body: AnthropicRequestBody) => body);

  async function call(input: ChatInput, context: AdapterContext, stream: boolean): Promise<UpstreamCall> {
    const body = convertToAnthropicRequest(input, { stream });
    return {
      ...resolvePath(input.model, context, stream),
      headers: { 'content-type': 'application/json', ...(await headers(context)) },
      body: JSON.stringify(adjust(body, context)),
    };
  }

  /**
   * The caller's Messages request as it came, with the model and `stream` gw decides and the caller's
   * `anthropic-beta` header; everything else (thinking and its signatures, cache_control, fields gw does not
   * know) reaches Anthropic untouched.
   */
  async function nativeCall(input: NativeChatInput, context: AdapterContext, stream: boolean) {
    const body = { ...input.native.body, model: input.model, stream } as AnthropicRequestBody;
    const beta = input.native.headers['anthropic-beta'];
    return {
      ...resolvePath(input.model, context, stream),
      headers: {
        'content-type': 'application/json',
        ...(beta === undefined ? {} : { 'anthropic-beta': beta }),
        ...(await headers(context)),
      },
      body: JSON.stringify(adjust(body, context)),
    };
  }

  async function chat(call: UpstreamCall, context: AdapterContext, model: string) {
    const { raw, parsed } = await callJson(context, call, {
      schema: anthropicMessageSchema,
      readMessage: readAnthropicErrorMessage,
    });
    return mapAnthropicResponse(parsed, { raw, model });
  }

  const chatAdapter = {
    capabilities: options.capabilities ?? ANTHROPIC_CAPABILITIES,

    async chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      return chat(await call(input, context, false), context, input.model);
    },

    async *chatStream(input: ChatInput, context: AdapterContext): AsyncGenerator<ChatCompletionChunk> {
      const events = callSse(context, await call(input, context, true), readAnthropicErrorMessage);
      yield* mapAnthropicStream(events, { provider: context.provider, model: input.model });
    },

    nativeFormat: (): NativeFormat => 'anthropic',

    async nativeChat(input: NativeChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      return chat(await nativeCall(input, context, false), context, input.model);
    },

    async *nativeChatStream(input: NativeChatInput, context: AdapterContext): AsyncGenerator<NativePiece> {
      const events = callSse(context, await nativeCall(input, context, true), readAnthropicErrorMessage);
      yield* relayAnthropicStream(events, { provider: context.provider, model: input.model });
    },
  } satisfies ProviderAdapter;
  return withTextViaChat(chatAdapter);
}

export const anthropicAdapter = createAnthropicAdapter();
