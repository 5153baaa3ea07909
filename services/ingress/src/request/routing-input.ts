import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeRequest } from '@gw/governance';
import type { Message } from '@gw/shared';
import { prefixTokensOf } from './estimate-tokens.ts';
import type { ParsedCompletion } from './parse-request.ts';
import { visibleHeaders } from './visible-headers.ts';

/** How much of the system prompt and of the first user message the prefix hash reads (bounded work). */
const AFFINITY_CHARS = 2_048;

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content ?? []) if (part.type === 'text') text += (part as { text: string }).text;
  return text;
}

/**
 * The conversation's identity for cache_affinity (docs/routing.md): a hash of the start of its system prompt
 * and of its first user message, which every later turn repeats, so each turn meets the provider key whose
 * prompt cache holds the conversation. None for a prompt without a user message.
 */
function affinityOf(messages: readonly Message[]): string | undefined {
  let system = '';
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') {
      if (system.length < AFFINITY_CHARS) system += textOf(message.content).slice(0, AFFINITY_CHARS);
      continue;
    }
    if (message.role !== 'user') continue;
    const first = textOf(message.content).slice(0, AFFINITY_CHARS);
    return hash('sha1', `${system.slice(0, AFFINITY_CHARS)}\u001f${first}`);
  }
  return undefined;
}

/** What routing rules and strategies read of a parsed request (the authorize request's `routing`). */
export function routingInput(
  parsed: ParsedCompletion,
  headers: IncomingHttpHeaders,
  promptTokens: number,
): NonNullable<AuthorizeRequest['routing']> {
  const input: NonNullable<AuthorizeRequest['routing']> = {
    requestType: parsed.operation,
    stream: parsed.stream,
    headers: visibleHeaders(headers),
    params: parsed.params,
  };
  const messages = parsed.messages;
  if (parsed.operation === 'chat' && messages && messages.length > 0) {
    input.prefixTokens = prefixTokensOf(messages, promptTokens);
    // Hashed only when read (cache_affinity reads it; a remote admission's JSON does): most requests never pay.
    let affinity: string | undefined | null = null;
    Object.defineProperty(input, 'affinity', {
      enumerable: true,
      get: () => {
        if (affinity === null) affinity = affinityOf(messages);
        return affinity;
      },
    });
  }
  return input;
}

/** A rule's name as an answer header's value: printable ASCII as it is, anything else percent-encoded. */
export function headerSafe(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) ? name : encodeURIComponent(name);
}
