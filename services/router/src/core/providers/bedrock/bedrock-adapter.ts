import { type ChatChoice, type ChatCompletionChunk, newId } from '@gw/shared';
import type { NativeFormat } from '../../router-service.ts';
import {
  type AdapterContext,
  type AdapterResult,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type EmbeddingsInput,
  type EmbeddingsResult,
  type NativeChatInput,
  type NativePiece,
  type ProviderAdapter,
} from '../adapter.ts';
import { relayMappedStream } from '../native-relay.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { callJson, callStream, type UpstreamCall, upstreamUrl } from '../upstream-call.ts';
import { authorizeBedrockRequest, type CredentialSource, standardCredentialChain } from './bedrock-auth.ts';
import {
  bedrockBaseUrl,
  bedrockModelId,
  bedrockModelPath,
  readBedrockKeySettings,
} from './bedrock-config.ts';
import { readBedrockErrorMessage } from './bedrock-error.ts';
import { bedrockConverseResponseSchema, bedrockTitanEmbeddingSchema } from './bedrock-schemas.ts';
import { answerToolSpec, structuredAnswer, structuredAnswerStream } from './bedrock-structured-output.ts';
import { convertToBedrockRequest } from './convert-to-bedrock-request.ts';
import { mapBedrockResponse } from './map-bedrock-response.ts';
import { mapBedrockStream } from './map-bedrock-stream.ts';
import { readEventStream } from './read-event-stream.ts';

export interface BedrockAdapterOptions {
  /** Credentials for keys without their own (default: the standard AWS chain, kept per adapter). */
  credentialChain?: CredentialSource;
}

type BedrockAction = 'converse' | 'converse-stream' | 'invoke';

const ACCEPT: Record<BedrockAction, string> = {
  converse: 'application/json',
  'converse-stream': 'application/vnd.amazon.eventstream',
  invoke: 'application/json',
};

/**
 * AWS Bedrock Runtime: chat over Converse and ConverseStream (one wire format for every model family),
 * text completions served by chat, embeddings over InvokeModel with Titan's body. Requests are signed
 * with SigV4 or carry a Bedrock API key, per key.
 */
export function createBedrockAdapter(options: BedrockAdapterOptions = {}): ProviderAdapter {
  const credentialChain = options.credentialChain ?? standardCredentialChain();

  /** One signed call: where it goes (the key's region unless a base URL was configured) and what it sends. */
  async function prepare(
    model: string,
    action: BedrockAction,
    body: unknown,
    context: AdapterContext,
  ): Promise<{ context: AdapterContext; call: UpstreamCall }> {
    const settings = readBedrockKeySettings(context.provider, context.key, context.environment);
    const baseUrl = bedrockBaseUrl(context.baseUrl, settings.region);
    const path = bedrockModelPath(bedrockModelId(model, settings.deployments), action);
    const text = JSON.stringify(body);
    const headers = await authorizeBedrockRequest(
      {
        url: upstreamUrl(baseUrl, { path }),
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT[action] },
        body: text,
      },
      { provider: context.provider, settings, credentialChain },
    );
    return {
      context: baseUrl === context.baseUrl ? context : { ...context, baseUrl },
      call: { path, headers, body: text },
    };
  }

  async function chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
    const prepared = await prepare(input.model, 'converse', convertToBedrockRequest(input), context);
    const { raw, parsed } = await callJson(prepared.context, prepared.call, {
      schema: bedrockConverseResponseSchema,
      readMessage: readBedrockErrorMessage,
    });
    const result = mapBedrockResponse(parsed, { raw, model: input.model, id: newId('chatcmpl') });
    return answerToolSpec(input.params) ? structuredAnswer(result) : result;
  }

  async function* chatStream(input: ChatInput, context: AdapterContext): AsyncGenerator<ChatCompletionChunk> {
    const prepared = await prepare(input.model, 'converse-stream', convertToBedrockRequest(input), context);
    const body = await callStream(prepared.context, prepared.call, readBedrockErrorMessage);
    const chunks = mapBedrockStream(readEventStream(body, prepared.context), {
      provider: context.provider,
      model: input.model,
      id: newId('chatcmpl'),
    });
    yield* answerToolSpec(input.params) ? structuredAnswerStream(chunks) : chunks;
  }

  /** A Converse request as the caller sent it (the model is in the path): answered as Bedrock answered. */
  async function nativeChat(
    input: NativeChatInput,
    context: AdapterContext,
  ): Promise<AdapterResult<ChatChoice>> {
    const prepared = await prepare(input.model, 'converse', input.native.body, context);
    const { raw, parsed } = await callJson(prepared.context, prepared.call, {
      schema: bedrockConverseResponseSchema,
      readMessage: readBedrockErrorMessage,
    });
    return mapBedrockResponse(parsed, { raw, model: input.model, id: newId('chatcmpl') });
  }

  /**
   * A ConverseStream request as the caller sent it; each event frame is relayed as one JSON line of its
   * event type and payload, which the Converse surface encodes again (the frame's own bytes are binary).
   */
  async function* nativeChatStream(
    input: NativeChatInput,
    context: AdapterContext,
  ): AsyncGenerator<NativePiece> {
    const prepared = await prepare(input.model, 'converse-stream', input.native.body, context);
    const body = await callStream(prepared.context, prepared.call, readBedrockErrorMessage);
    const options = { provider: context.provider, model: input.model, id: newId('chatcmpl') };
    yield* relayMappedStream(
      readEventStream(body, prepared.context),
      (frames) => mapBedrockStream(frames, options),
      (frame) =>
        `${JSON.stringify({ event: frame.headers[':event-type'], payload: Buffer.from(frame.body).toString('utf8') })}\n`,
    );
  }

  /** Titan embeds one text per InvokeModel call: the inputs go out side by side and come back in order. */
  async function embeddings(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult> {
    const texts = typeof input.input === 'string' ? [input.input] : input.input;
    const dimensions = input.params['dimensions'];
    const results = await Promise.all(
      texts.map(async (inputText) => {
        const body = { inputText, ...(dimensions !== undefined ? { dimensions } : {}) };
        const prepared = await prepare(input.model, 'invoke', body, context);
        return callJson(prepared.context, prepared.call, {
          schema: bedrockTitanEmbeddingSchema,
          readMessage: readBedrockErrorMessage,
        });
      }),
    );
    const promptTokens = results.reduce((sum, result) => sum + result.parsed.inputTextTokenCount, 0);
    return {
      model: input.model,
      data: results.map((result, index) => ({ index, embedding: result.parsed.embedding })),
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
      raw: results.length === 1 ? results[0]!.raw : results.map((result) => result.raw),
    };
  }

  return withTextViaChat({
    capabilities: { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream', 'embeddings'] },
    chat,
    chatStream,
    embeddings,
    nativeFormat: (): NativeFormat => 'converse',
    nativeChat,
    nativeChatStream,
  });
}

export const bedrockAdapter = createBedrockAdapter();
