import type { Message } from '@gw/shared';

/**
 * Tokens in a text of this many bytes or characters: about four a token, the rule of thumb of BPE tokenizers
 * on English text. gw's one estimate, wherever no provider reported a count (reservations, relayed text).
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

const textTokens = (text: string) => tokensOfLength(Buffer.byteLength(text));
const jsonTokens = (value: unknown) => textTokens(JSON.stringify(value));

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
 * gw's estimate of a prompt's tokens: its texts at about four bytes a token, the framing chat formats add
 * per message, images at a typical image's count and tool definitions as their JSON. For token-count
 * endpoints whose serving provider has no counter of its own, and for the prompt's tokens a translated
 * stream announces before the provider reports them. An estimate, not the provider's tokenizer.
 */
export function estimateTokens(messages: Message[], tools?: unknown): number {
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
