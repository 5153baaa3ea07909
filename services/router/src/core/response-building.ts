import type { ChatChoice, CompletionResponse, EmbeddingsList, TextChoice } from '@gw/shared';
import type { AdapterResult, EmbeddingsResult } from './providers/adapter.ts';
import type { CompletionRoute, EmbeddingsRoute } from './router-service.ts';

/** Models are answered without the provider prefix. */
function bareModel(model: string, provider: string): string {
  return model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
}

function extraFields(options: {
  provider: string;
  params: Record<string, unknown>;
  startedAt: number;
  raw: unknown;
  sendRawResponse: boolean;
}): CompletionResponse['extra_fields'] {
  const extra: CompletionResponse['extra_fields'] = {
    provider: options.provider,
    model_params: options.params,
    latency: Math.round(performance.now() - options.startedAt) / 1000,
  };
  if (options.sendRawResponse) extra.raw_response = options.raw;
  return extra;
}

/** Text choices also carry `message` (gw's completion answer), so chat-shaped readers find the text. */
export function withChatMessages(result: AdapterResult<TextChoice>): AdapterResult<TextChoice> {
  return {
    ...result,
    choices: result.choices.map((choice) => ({
      ...choice,
      message: { role: 'assistant' as const, content: choice.text },
    })),
  };
}

/**
 * A choice with the members OpenAI's schema requires of every answer (`logprobs`, and a message's `refusal`),
 * null when the provider has no such thing (Anthropic, Gemini…): strict OpenAI clients validate them.
 */
function withOpenAiMembers<Choice extends ChatChoice | TextChoice>(choice: Choice): Choice {
  const message = (choice as ChatChoice).message as ChatChoice['message'] | undefined;
  if ('logprobs' in choice && (!message || 'refusal' in message)) return choice;
  const completed = { ...choice, logprobs: choice['logprobs'] ?? null };
  return message ? { ...completed, message: { ...message, refusal: message.refusal ?? null } } : completed;
}

/** gw's completion answer from an adapter's answer (README.md "Requests"). */
export function buildCompletionResponse(options: {
  request: CompletionRoute;
  provider: string;
  result: AdapterResult<ChatChoice> | AdapterResult<TextChoice>;
  startedAt: number;
  sendRawResponse: boolean;
}): CompletionResponse {
  const { request, provider, result } = options;
  const response: CompletionResponse = {
    id: result.id || `gw-${request.requestId}`,
    object: request.operation === 'chat' ? 'chat.completion' : 'text.completion',
    choices: (result.choices as Array<ChatChoice | TextChoice>).map(withOpenAiMembers),
    model: bareModel(result.model, provider),
    created: result.created,
    usage: result.usage,
    extra_fields: extraFields({ ...options, params: request.params, raw: result.raw }),
  };
  if (result.systemFingerprint) response.system_fingerprint = result.systemFingerprint;
  return response;
}

/** OpenAI's embeddings list, with gw's `extra_fields`, from an adapter's answer. */
export function buildEmbeddingsList(options: {
  request: EmbeddingsRoute;
  provider: string;
  result: EmbeddingsResult;
  startedAt: number;
  sendRawResponse: boolean;
}): EmbeddingsList {
  const { provider, result } = options;
  return {
    object: 'list',
    data: result.data.map((item) => ({ object: 'embedding', index: item.index, embedding: item.embedding })),
    model: bareModel(result.model, provider),
    usage: { prompt_tokens: result.usage.prompt_tokens, total_tokens: result.usage.total_tokens },
    extra_fields: extraFields({ ...options, params: options.request.params, raw: result.raw }),
  };
}
