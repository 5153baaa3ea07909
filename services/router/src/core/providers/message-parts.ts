import { type ContentPart, invalidRequest, type Message, type ToolCall } from '@gw/shared';

/** The pieces of OpenAI-shaped messages every translator needs; each provider builds its own blocks from them. */

type TextPart = Extract<ContentPart, { type: 'text' }>;

export function isTextPart(part: ContentPart): part is TextPart {
  return part.type === 'text';
}

/** `data:<media type>[;param…];base64,<data>`, or undefined for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^,;]*)*;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, data: match[2]! } : undefined;
}

/** The text of a message's content, parts joined by `separator`; images and other parts are left out. */
export function textOf(content: Message['content'], separator = '\n'): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter(isTextPart)
    .map((part) => part.text)
    .filter((text) => text)
    .join(separator);
}

/** A tool call's arguments as the JSON object providers other than OpenAI want; anything else is a 400. */
export function toolCallArguments(
  call: ToolCall,
  options: { provider: string; param: string },
): Record<string, unknown> {
  let input: unknown;
  try {
    input = JSON.parse(call.function.arguments || '{}');
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidRequest(`tool call arguments must be a JSON object for ${options.provider}`, options.param);
  }
  return input as Record<string, unknown>;
}

export interface Turn<Block> {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface TurnBlocks<Block> {
  provider: string;
  /** A user or assistant message's content as blocks. */
  content(content: Message['content'], param: string): Block[];
  /** An assistant message's tool calls as blocks. */
  toolUses(message: Message, position: number): Block[];
  /** A tool message as the block answering the call `toolCallId` (sent in a user turn). */
  toolResult(message: Message, position: number, toolCallId: string): Block;
}

/** A system or developer message's text, and the cache breakpoint one of its parts set, if any. */
export interface SystemText {
  text: string;
  cacheControl: Record<string, unknown> | undefined;
}

/** The cache breakpoint (`cache_control`) the last marked part of a content sets, if any. */
function cacheControlOf(content: Message['content']): Record<string, unknown> | undefined {
  if (!Array.isArray(content)) return undefined;
  let marker: Record<string, unknown> | undefined;
  for (const part of content) {
    const cacheControl = (part as { cache_control?: Record<string, unknown> }).cache_control;
    if (cacheControl) marker = cacheControl;
  }
  return marker;
}

/**
 * Messages without cache breakpoints, for providers that cache on their own (OpenAI-format servers reject
 * members they do not know); the same array when none has one.
 */
export function withoutCacheControl(messages: Message[]): Message[] {
  if (!messages.some((message) => cacheControlOf(message.content))) return messages;
  return messages.map((message) =>
    Array.isArray(message.content) && cacheControlOf(message.content)
      ? {
          ...message,
          content: message.content.map((part) => {
            const { cache_control: _marker, ...rest } = part as ContentPart & { cache_control?: unknown };
            return rest as ContentPart;
          }),
        }
      : message,
  );
}

/**
 * Messages as alternating user/assistant turns, for providers that want them so (Anthropic, Bedrock):
 * system and developer messages are set apart, tool results become blocks of a user turn, consecutive
 * messages of one role merge, and empty turns are dropped.
 */
export function toAlternatingTurns<Block>(
  messages: readonly Message[],
  blocks: TurnBlocks<Block>,
): { system: SystemText[]; turns: Array<Turn<Block>> } {
  const system: SystemText[] = [];
  const turns: Array<Turn<Block>> = [];
  const append = (role: Turn<Block>['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  messages.forEach((message, position) => {
    const param = `messages[${position}].content`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push({ text, cacheControl: cacheControlOf(message.content) });
        return;
      }
      case 'user':
        append('user', blocks.content(message.content, param));
        return;
      case 'assistant':
        append('assistant', [
          ...blocks.content(message.content, param),
          ...blocks.toolUses(message, position),
        ]);
        return;
      case 'tool':
        if (!message.tool_call_id) {
          throw invalidRequest('a tool message needs tool_call_id', `messages[${position}].tool_call_id`);
        }
        append('user', [blocks.toolResult(message, position, message.tool_call_id)]);
        return;
      case 'function':
        throw invalidRequest(
          `${blocks.provider} does not take the legacy 'function' role; send tool messages`,
          `messages[${position}].role`,
        );
    }
  });
  return { system, turns };
}
