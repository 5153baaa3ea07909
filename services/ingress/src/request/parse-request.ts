import type { NativeRequest } from '@gw/router';
import {
  chatRequestSchema,
  invalidRequest,
  type Message,
  paramsSchema,
  textRequestSchema,
  validate,
} from '@gw/shared';
import { plainChatRequest, plainParamsValid } from './plain-chat-request.ts';

export interface Target {
  provider: string;
  model: string;
}

export interface ParsedCompletion {
  operation: 'chat' | 'text' | 'embeddings';
  target: Target;
  fallbacks: Target[];
  messages?: Message[];
  prompt?: string | string[];
  /** The texts to embed (operation `embeddings`). */
  input?: string | string[];
  params: Record<string, unknown>;
  stream: boolean;
  /** The caller's own request, for a provider of its format (a surface sets it; router-service.ts). */
  native?: NativeRequest | undefined;
}

/** Top-level members that are not params: those the chat request's schema declares. */
const CHAT_ENVELOPE: ReadonlySet<string> = new Set(Object.keys(chatRequestSchema.shape));
const TEXT_ENVELOPE = new Set([...CHAT_ENVELOPE, 'text', 'prompt']);

/**
 * `<provider>/<model>`; the model may itself contain slashes. A bare model (no slash) leaves the provider
 * empty when `bareAllowed`: governance then routes it by the virtual key's provider configs.
 */
export function parseTarget(
  value: string,
  field: string,
  options: { provider?: string | undefined; bareAllowed?: boolean } = {},
): Target {
  if (options.provider) return { provider: options.provider, model: value };
  const slash = value.indexOf('/');
  if (slash === -1 && options.bareAllowed) return { provider: '', model: value };
  if (slash <= 0 || slash === value.length - 1) {
    throw invalidRequest(
      `${field}: '${value}' must be '<provider>/<model>' (for example openai/gpt-4o-mini)`,
      field,
    );
  }
  return { provider: value.slice(0, slash), model: value.slice(slash + 1) };
}

/**
 * Params are the native `params` object plus OpenAI's top-level fields (`max_tokens`, `tools`, …), so that
 * OpenAI SDK calls work unchanged; `params` wins when both name a field. Unknown members pass through.
 */
function collectParams(
  body: Record<string, unknown>,
  envelope: ReadonlySet<string>,
): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  let topLevel = false;
  for (const name in body) {
    if (envelope.has(name)) continue;
    params[name] = body[name];
    topLevel = true;
  }
  const nested = body['params'];
  if (nested !== undefined) {
    if (typeof nested !== 'object' || nested === null || Array.isArray(nested)) {
      throw invalidRequest('params: must be an object', 'params');
    }
    Object.assign(params, nested);
  }
  if (!plainParamsValid(params))
    validate(paramsSchema, params, topLevel && nested === undefined ? '' : 'params');
  return params;
}

function fallbackTargets(fallbacks: string[] | undefined): Target[] {
  return (fallbacks ?? []).map((value, index) => parseTarget(value, `fallbacks[${index}]`));
}

export function parseChatRequest(body: unknown): ParsedCompletion {
  const request = plainChatRequest(body) ?? validate(chatRequestSchema, body);
  return {
    operation: 'chat',
    target: parseTarget(request.model, 'model', { provider: request.provider, bareAllowed: true }),
    fallbacks: fallbackTargets(request.fallbacks),
    messages: request.messages,
    params: collectParams(request, CHAT_ENVELOPE),
    stream: request.stream === true,
  };
}

export function parseTextRequest(body: unknown): ParsedCompletion {
  const request = validate(textRequestSchema, body);
  const prompt = request.text ?? request.prompt;
  if (prompt === undefined) throw invalidRequest('text: is required', 'text');
  return {
    operation: 'text',
    target: parseTarget(request.model, 'model', { provider: request.provider, bareAllowed: true }),
    fallbacks: fallbackTargets(request.fallbacks),
    prompt,
    params: collectParams(request, TEXT_ENVELOPE),
    stream: request.stream === true,
  };
}
