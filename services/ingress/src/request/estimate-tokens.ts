import type { Message } from '@gw/shared';

/**
 * Tokens in a text of this many bytes or characters: about four a token, the rule of thumb of BPE tokenizers
 * on English text. gw's one estimate, wherever no provider reported a count (reservations, relayed text).
 */
export function tokensOfLength(length: number): number {
  return Math.ceil(length / 4);
}

/**
 * gw's estimate of a prompt's tokens (about four bytes of JSON a token), for token-count endpoints whose
 * serving provider has no counter of its own. It is an estimate, not the provider's tokenizer.
 */
export function estimateTokens(messages: Message[], tools?: unknown): number {
  return Math.max(1, tokensOfLength(Buffer.byteLength(JSON.stringify({ messages, tools: tools ?? [] }))));
}
