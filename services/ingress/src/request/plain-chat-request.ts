import { chatRequestSchema, copyUndeclared, isPlainObject, messageSchema } from '@gw/shared';
import type { z } from 'zod';

type ChatRequest = z.infer<typeof chatRequestSchema>;
type Members = Record<string, unknown>;

/** The members of a request and of a message that the schemas declare; the others pass through as they came. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(Object.keys(chatRequestSchema.shape));
const MESSAGE_MEMBERS: ReadonlySet<string> = new Set(Object.keys(messageSchema.shape));
const STREAM_OPTIONS_MEMBERS = new Set(['include_usage']);
const ROLES: ReadonlySet<unknown> = new Set(messageSchema.shape.role.options);

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

function isTarget(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

/**
 * Copies a member the schema declares `.optional()` when the source has it (an undefined one too, as the schema
 * does); false when its value is not one the schema takes.
 */
function copyOptional(target: Members, source: Members, name: string, check: (value: unknown) => boolean) {
  if (!(name in source)) return true;
  const value = source[name];
  if (value !== undefined && !check(value)) return false;
  target[name] = value;
  return true;
}

/** A message whose content is text (or null, or none), without tool calls, or undefined. */
function plainMessage(value: unknown): Members | undefined {
  if (!isPlainObject(value) || !ROLES.has(value['role'])) return undefined;
  const message: Members = { role: value['role'] };
  if (!copyOptional(message, value, 'content', (content) => content === null || isText(content)))
    return undefined;
  if (!copyOptional(message, value, 'name', isText)) return undefined;
  if (value['tool_calls'] !== undefined) return undefined;
  if ('tool_calls' in value) message['tool_calls'] = undefined;
  if (!copyOptional(message, value, 'tool_call_id', isText)) return undefined;
  return copyUndeclared(message, value, MESSAGE_MEMBERS) ? message : undefined;
}

/**
 * A chat request of the shape nearly every one has (OpenAI's: a model, messages of text, its parameters at the
 * top level; no native `params`), read without the schema: the same members in the same key order as
 * `chatRequestSchema` makes of it, at a fraction of the cost on every request. Undefined for any other request,
 * which the schema parses, so that a request refused is refused by the schema, with its message.
 */
export function plainChatRequest(body: unknown): ChatRequest | undefined {
  if (!isPlainObject(body) || 'params' in body) return undefined;
  const { model, messages } = body;
  if (!isTarget(model) || !Array.isArray(messages) || messages.length === 0) return undefined;
  const plainMessages: Members[] = [];
  for (const message of messages as unknown[]) {
    const plain = plainMessage(message);
    if (!plain) return undefined;
    plainMessages.push(plain);
  }
  const request: Members = { model, messages: plainMessages };
  const fallbacks = body['fallbacks'];
  if (fallbacks !== undefined) {
    if (!Array.isArray(fallbacks) || !fallbacks.every(isTarget)) return undefined;
    request['fallbacks'] = [...fallbacks];
  } else if ('fallbacks' in body) request['fallbacks'] = undefined;
  if (!copyOptional(request, body, 'stream', isBoolean)) return undefined;
  const streamOptions = body['stream_options'];
  if (streamOptions !== undefined) {
    if (!isPlainObject(streamOptions)) return undefined;
    const options: Members = {};
    if (!copyOptional(options, streamOptions, 'include_usage', isBoolean)) return undefined;
    if (!copyUndeclared(options, streamOptions, STREAM_OPTIONS_MEMBERS)) return undefined;
    request['stream_options'] = options;
  } else if ('stream_options' in body) request['stream_options'] = undefined;
  if (!copyOptional(request, body, 'provider', isText)) return undefined;
  return copyUndeclared(request, body, REQUEST_MEMBERS) ? (request as ChatRequest) : undefined;
}

function isPositiveInteger(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

function isTextList(value: unknown): boolean {
  return Array.isArray(value) && value.every(isText);
}

function isBetween(value: unknown, least: number, most: number): boolean {
  return typeof value === 'number' && value >= least && value <= most;
}

/**
 * Whether `paramsSchema` takes these params, answered without it for params of the common kinds (token limits,
 * sampling, stop, user; members it does not declare); false when it cannot tell (tools, a tool choice, a
 * response format) or they are not valid, and the schema decides, with its message.
 */
export function plainParamsValid(params: Members): boolean {
  for (const name in params) {
    const value = params[name];
    if (value === undefined) continue;
    switch (name) {
      case 'max_tokens':
      case 'max_completion_tokens':
      case 'n':
        if (!isPositiveInteger(value)) return false;
        break;
      case 'seed':
        if (!Number.isSafeInteger(value)) return false;
        break;
      case 'temperature':
        if (!isBetween(value, 0, 2)) return false;
        break;
      case 'top_p':
        if (!isBetween(value, 0, 1)) return false;
        break;
      case 'stop':
        if (!isText(value) && !isTextList(value)) return false;
        break;
      case 'stop_sequences':
        if (!isTextList(value)) return false;
        break;
      case 'user':
        if (!isText(value)) return false;
        break;
      case 'tools':
      case 'tool_choice':
      case 'response_format':
        return false;
    }
  }
  return true;
}
