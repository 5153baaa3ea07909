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

type RoutingRead = NonNullable<AuthorizeRequest['routing']>;

/**
 * What routing rules and strategies read of a parsed request (the authorize request's `routing`). The prefix
 * hash is made only when read (cache_affinity reads it; a remote admission's JSON does): most requests never
 * pay. A class with the hash behind a getter: a getter defined on each object gave every request's object a
 * shape of its own (~1.3-2.5 µs a request to build, and every later read of it slow).
 */
class RoutingInput implements RoutingRead {
  readonly requestType: RoutingRead['requestType'];
  readonly stream: boolean;
  readonly headers: Record<string, string>;
  readonly params: Record<string, unknown>;
  readonly prefixTokens: number | undefined;
  readonly #messages: readonly Message[] | undefined;
  #affinity: string | undefined | null = null;

  constructor(parsed: ParsedCompletion, headers: IncomingHttpHeaders, promptTokens: number) {
    this.requestType = parsed.operation;
    this.stream = parsed.stream;
    this.headers = visibleHeaders(headers);
    this.params = parsed.params;
    const messages = parsed.operation === 'chat' && parsed.messages?.length ? parsed.messages : undefined;
    this.prefixTokens = messages && prefixTokensOf(messages, promptTokens);
    this.#messages = messages;
  }

  get affinity(): string | undefined {
    if (this.#affinity === null) this.#affinity = this.#messages && affinityOf(this.#messages);
    return this.#affinity;
  }

  toJSON(): RoutingRead {
    const { requestType, stream, headers, params, prefixTokens, affinity } = this;
    return { requestType, stream, headers, params, prefixTokens, affinity };
  }
}

export function routingInput(
  parsed: ParsedCompletion,
  headers: IncomingHttpHeaders,
  promptTokens: number,
): RoutingRead {
  return new RoutingInput(parsed, headers, promptTokens);
}

/** A rule's name as an answer header's value: printable ASCII as it is, anything else percent-encoded. */
export function headerSafe(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) ? name : encodeURIComponent(name);
}
