import type { ChatCompletionChunk, CompletionResponse, Usage } from '../schemas/completion.ts';
import type { SpanAttributes } from './tracer.ts';

/**
 * Span attributes of OpenTelemetry's GenAI semantic conventions, and gw's own (`gw.*`), in one place. Values
 * are never key values; content attributes are set only when `tracing.include_content` is on.
 */
export const ATTRIBUTES = {
  operation: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The name older conventions (and many backends) use for the provider. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  requestId: 'gw.request_id',
  provider: 'gw.provider',
  keyId: 'gw.provider.key_id',
  attempt: 'gw.attempt',
  virtualKeyId: 'gw.virtual_key.id',
  authorizeKind: 'gw.governance.kind',
  mcpClient: 'gw.mcp.client',
  fallbacks: 'gw.fallbacks',
} as const;

/** gw's provider names as the conventions' well-known `gen_ai.provider.name` values; others pass as they are. */
const WELL_KNOWN_PROVIDERS: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  gemini: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  mistral: 'mistral_ai',
};

/** The conventions' operation names, by gw's route or adapter operation. */
const OPERATION_NAMES: Readonly<Record<string, string>> = {
  chat: 'chat',
  chat_stream: 'chat',
  text: 'text_completion',
  text_stream: 'text_completion',
  embeddings: 'embeddings',
};

export function genAiOperation(operation: string): string {
  return OPERATION_NAMES[operation] ?? operation;
}

/** The provider that served (or was tried), by its conventional name and by gw's config name. */
export function providerAttributes(provider: string): SpanAttributes {
  const name = WELL_KNOWN_PROVIDERS[provider] ?? provider;
  return { [ATTRIBUTES.providerName]: name, [ATTRIBUTES.system]: name, [ATTRIBUTES.provider]: provider };
}

function usageAttributes(usage: Usage): SpanAttributes {
  return {
    [ATTRIBUTES.inputTokens]: usage.prompt_tokens,
    [ATTRIBUTES.outputTokens]: usage.completion_tokens,
  };
}

/** What a whole answer says: model, id, tokens, finish reasons (and the answer itself when content is on). */
export function responseAttributes(
  response: CompletionResponse,
  options: { includeContent: boolean },
): SpanAttributes {
  const attributes: SpanAttributes = {
    [ATTRIBUTES.responseModel]: response.model,
    [ATTRIBUTES.responseId]: response.id,
    [ATTRIBUTES.finishReasons]: response.choices.map((choice) => choice.finish_reason ?? 'null'),
    ...usageAttributes(response.usage),
  };
  if (options.includeContent) {
    attributes[ATTRIBUTES.outputMessages] = JSON.stringify(
      response.choices.map((choice) => ('message' in choice ? choice.message : { text: choice.text })),
    );
  }
  return attributes;
}

/** Gathers what a stream says as its chunks pass, for a span's attributes at its end. */
export function streamSummary(options: { includeContent: boolean }) {
  let model: string | undefined;
  let id: string | undefined;
  let usage: Usage | undefined;
  const finishReasons: string[] = [];
  let text = '';
  return {
    chunk(chunk: ChatCompletionChunk): void {
      model ??= chunk.model || undefined;
      id ??= chunk.id || undefined;
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.finish_reason) finishReasons[choice.index] = choice.finish_reason;
        if (options.includeContent) text += choice.delta?.content ?? choice.text ?? '';
      }
    },
    attributes(): SpanAttributes {
      return {
        [ATTRIBUTES.responseModel]: model,
        [ATTRIBUTES.responseId]: id,
        [ATTRIBUTES.finishReasons]: finishReasons.length > 0 ? finishReasons.filter(Boolean) : undefined,
        ...(usage && usageAttributes(usage)),
        ...(options.includeContent && { [ATTRIBUTES.outputMessages]: JSON.stringify([{ text }]) }),
      };
    },
  };
}
