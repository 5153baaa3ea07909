import type { AuthorizeRequest } from '@gw/governance';
import type { Message } from '@gw/shared';
import type { ParsedCompletion } from './parse-request.ts';

/**
 * Tokens in a text of this many characters (or bytes, where a body is not read): about four a token, the rule
 * of thumb of BPE tokenizers on English text. gw's one rule, wherever no provider reported a count
 * (reservations, relayed text, token counts).
 */
export function tokensOfLength(length: number): number {
  return Math.ceil(length / 4);
}

/** What a chat format spends on a message besides its content (role, delimiters), and before the reply. */
const TOKENS_PER_MESSAGE = 4;
const REPLY_PRIMING_TOKENS = 3;
/**
 * An image whose size gw does not know: OpenAI's count of a 1024-pixel square at high detail (Anthropic
 * counts about 1,400 for it), and OpenAI's flat count at low detail. Its base64 length says nothing.
 */
const IMAGE_TOKENS = 765;
const LOW_DETAIL_IMAGE_TOKENS = 85;

/**
 * A text's tokens by its characters: its length is known, where its UTF-8 bytes must be counted (2–3 µs for
 * 4 KB, a fifth to a third of what parsing the whole body costs). The same for ASCII; less for other scripts.
 */
const textTokens = (text: string) => tokensOfLength(text.length);

/**
 * The length of a value's JSON without writing it (JSON.stringify of ten tool definitions costs about six
 * times this walk): exact but for the escapes strings would take.
 */
function jsonLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return String(value).length;
  let length = 1;
  if (Array.isArray(value)) {
    for (const item of value) length += jsonLength(item) + 1;
    return Math.max(2, length);
  }
  const record = value as Record<string, unknown>;
  for (const key in record) length += key.length + 3 + jsonLength(record[key]) + 1;
  return Math.max(2, length);
}

const jsonTokens = (value: unknown) => tokensOfLength(jsonLength(value));

function contentTokens(content: Message['content']): number {
  if (typeof content === 'string') return textTokens(content);
  let tokens = 0;
  for (const part of content ?? []) {
    if (part.type === 'text') tokens += textTokens((part as { text: string }).text);
    else if (part.type === 'image_url') {
      const { detail } = (part as { image_url: { detail?: string } }).image_url;
      tokens += detail === 'low' ? LOW_DETAIL_IMAGE_TOKENS : IMAGE_TOKENS;
    } else tokens += jsonTokens(part);
  }
  return tokens;
}

/**
 * gw's estimate of a prompt's tokens: its texts at about four characters a token, the framing chat formats add
 * per message, images at a typical image's count and tool definitions as their JSON. An estimate, not the
 * provider's tokenizer; requests use it through `estimateOf`.
 */
function estimateTokens(messages: Message[], tools?: unknown): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    tokens += TOKENS_PER_MESSAGE + contentTokens(message.content);
    if (message.name) tokens += textTokens(message.name);
    for (const call of message.tool_calls ?? []) {
      tokens += textTokens(call.function.name) + textTokens(call.function.arguments);
    }
  }
  if (Array.isArray(tools) && tools.length > 0) tokens += jsonTokens(tools);
  return tokens;
}

/**
 * Tokens of a chat prompt before its last message (the conversation so far, which a provider's prompt cache
 * may hold): lowest_cost routing prices them as cached input.
 */
export function prefixTokensOf(messages: readonly Message[], promptTokens: number): number {
  const last = messages.at(-1);
  if (!last) return 0;
  return Math.max(0, promptTokens - TOKENS_PER_MESSAGE - contentTokens(last.content) - REPLY_PRIMING_TOKENS);
}

/** Tokens of a text or a list of texts (a text completion's prompt, an embeddings input). */
function textsTokens(texts: string | string[] | undefined): number {
  if (typeof texts === 'string') return textTokens(texts);
  let tokens = 0;
  for (const text of texts ?? []) tokens += textTokens(text);
  return tokens;
}

/** The most the answer may use, when the request says (`max_tokens`, or chat's newer `max_completion_tokens`). */
function maxCompletionTokens(params: Record<string, unknown>): number | undefined {
  const value = params['max_tokens'] ?? params['max_completion_tokens'];
  return typeof value === 'number' ? value : undefined;
}

/** Choices the request asks for (`n`): each is a whole answer, paid for. */
function choices(params: Record<string, unknown>): number | undefined {
  const value = params['n'];
  return typeof value === 'number' && Number.isInteger(value) && value > 1 ? value : undefined;
}

/**
 * gw's one estimate of a parsed request, whatever surface it came by: its prompt's tokens (the messages and
 * tool definitions, the prompt or the texts to embed, walked once), what the answer may use and how many
 * answers. Admission reserves by it; token-count endpoints whose serving provider has no counter of its own
 * answer its `promptTokens`, and so does a translated stream that announces the prompt before the provider
 * reports it.
 */
export function estimateOf(
  parsed: Pick<ParsedCompletion, 'operation' | 'messages' | 'prompt' | 'input' | 'params'>,
): NonNullable<AuthorizeRequest['estimate']> {
  const { params } = parsed;
  const promptTokens =
    parsed.operation === 'chat'
      ? estimateTokens(parsed.messages ?? [], params['tools'])
      : textsTokens(parsed.operation === 'text' ? parsed.prompt : parsed.input);
  const n = choices(params);
  return {
    promptTokens,
    maxCompletionTokens: maxCompletionTokens(params),
    ...(n !== undefined && { choices: n }),
  };
}
