import type { Message } from '@gw/shared';

/**
 * gw's estimate of a prompt's tokens (about four bytes of JSON a token), for token-count endpoints whose
 * serving provider has no counter of its own. It is an estimate, not the provider's tokenizer.
 */
export function estimateTokens(messages: Message[], tools?: unknown): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify({ messages, tools: tools ?? [] })) / 4));
}
