import {
  type ContentPart,
  type imageUrlPartSchema,
  invalidRequest,
  type Message,
  type textPartSchema,
} from '@gw/shared';
import type { z } from 'zod';

/** A content block of an Anthropic request message (text, image, tool_use, tool_result, or passed through). */
export type AnthropicRequestBlock = { type: string } & Record<string, unknown>;

export interface AnthropicRequestMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

export interface AnthropicPrompt {
  /** System and developer messages, joined; absent when there are none. */
  system: string | undefined;
  messages: AnthropicRequestMessage[];
}

type TextPart = z.infer<typeof textPartSchema>;
type ImageUrlPart = z.infer<typeof imageUrlPartSchema>;

/** `data:<media type>;base64,<data>` */
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(url: string, param: string): AnthropicRequestBlock {
  const dataUrl = DATA_URL.exec(url);
  if (dataUrl) return { type: 'image', source: { type: 'base64', media_type: dataUrl[1], data: dataUrl[2] } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalidRequest('anthropic takes images as base64 data URLs or http(s) URLs', param);
}

/** Parts as Anthropic blocks. Empty text is dropped: Anthropic rejects empty text blocks. */
function contentBlocks(content: Message['content'], param: string): AnthropicRequestBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return content.flatMap((part: ContentPart, index): AnthropicRequestBlock[] => {
    // The message schema admits other part types only when they are neither text nor image_url, so the
    // type alone tells which of its shapes a part has.
    if (part.type === 'text') {
      const { text } = part as TextPart;
      return text ? [{ type: 'text', text }] : [];
    }
    if (part.type === 'image_url') {
      return [imageBlock((part as ImageUrlPart).image_url.url, `${param}[${index}].image_url.url`)];
    }
    // Other part types (document, a caller's own Anthropic blocks) go to Anthropic as they are.
    return [part as AnthropicRequestBlock];
  });
}

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .map((part) => (part.type === 'text' ? (part as TextPart).text : ''))
    .filter((text) => text)
    .join('\n');
}

function toolUseBlocks(message: Message, position: number): AnthropicRequestBlock[] {
  return (message.tool_calls ?? []).map((call, index) => {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      input = undefined;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw invalidRequest(
        'tool call arguments must be a JSON object for anthropic',
        `messages[${position}].tool_calls[${index}].function.arguments`,
      );
    }
    return { type: 'tool_use', id: call.id, name: call.function.name, input };
  });
}

function toolResultBlock(message: Message, position: number): AnthropicRequestBlock {
  if (!message.tool_call_id) {
    throw invalidRequest('a tool message needs tool_call_id', `messages[${position}].tool_call_id`);
  }
  const content = message.content;
  return {
    type: 'tool_result',
    tool_use_id: message.tool_call_id,
    content: typeof content === 'string' ? content : contentBlocks(content, `messages[${position}].content`),
  };
}

/**
 * OpenAI-shaped messages as an Anthropic prompt: system and developer messages move to `system`; tool
 * results become `tool_result` blocks of a user turn; and because Anthropic wants user and assistant turns
 * to alternate, consecutive messages of the same role (several tool results, a user text after them) merge.
 */
export function convertToAnthropicMessages(messages: readonly Message[]): AnthropicPrompt {
  const system: string[] = [];
  const converted: AnthropicRequestMessage[] = [];

  function append(role: AnthropicRequestMessage['role'], blocks: AnthropicRequestBlock[]): void {
    if (blocks.length === 0) return;
    const last = converted[converted.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else converted.push({ role, content: blocks });
  }

  messages.forEach((message, position) => {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push(text);
        return;
      }
      case 'user':
        append('user', contentBlocks(message.content, `messages[${position}].content`));
        return;
      case 'assistant':
        append('assistant', [
          ...contentBlocks(message.content, `messages[${position}].content`),
          ...toolUseBlocks(message, position),
        ]);
        return;
      case 'tool':
        append('user', [toolResultBlock(message, position)]);
        return;
      case 'function':
        throw invalidRequest(
          "anthropic does not take the legacy 'function' role; send tool messages",
          `messages[${position}].role`,
        );
    }
  });

  return { system: system.length > 0 ? system.join('\n\n') : undefined, messages: converted };
}
