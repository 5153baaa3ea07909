import {
  type ContentPart,
  type imageUrlPartSchema,
  invalidRequest,
  type Message,
  type textPartSchema,
} from '@gw/shared';
import type { z } from 'zod';
import { parseDataUrl, toAlternatingTurns, toolCallArguments } from '../message-parts.ts';

/** A content block of an Anthropic request message (text, image, tool_use, tool_result, or passed through). */
export type AnthropicRequestBlock = { type: string } & Record<string, unknown>;

export interface AnthropicRequestMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

export interface AnthropicPrompt {
  /**
   * System and developer messages, joined; as blocks when one of them sets a cache breakpoint; absent when
   * there are none.
   */
  system: string | AnthropicRequestBlock[] | undefined;
  messages: AnthropicRequestMessage[];
}

type TextPart = z.infer<typeof textPartSchema>;
type ImageUrlPart = z.infer<typeof imageUrlPartSchema>;

function imageBlock(url: string, param: string): AnthropicRequestBlock {
  const dataUrl = parseDataUrl(url);
  if (dataUrl)
    return { type: 'image', source: { type: 'base64', media_type: dataUrl.mediaType, data: dataUrl.data } };
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
      const { text, cache_control } = part as TextPart;
      return text ? [cache_control ? { type: 'text', text, cache_control } : { type: 'text', text }] : [];
    }
    if (part.type === 'image_url') {
      const { image_url, cache_control } = part as ImageUrlPart;
      const image = imageBlock(image_url.url, `${param}[${index}].image_url.url`);
      return [cache_control ? { ...image, cache_control } : image];
    }
    // Other part types (document, a caller's own Anthropic blocks) go to Anthropic as they are.
    return [part as AnthropicRequestBlock];
  });
}

const ANTHROPIC_BLOCKS = {
  provider: 'anthropic',
  content: contentBlocks,
  toolUses: (message: Message, position: number): AnthropicRequestBlock[] =>
    (message.tool_calls ?? []).map((call, index) => ({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolCallArguments(call, {
        provider: 'anthropic',
        param: `messages[${position}].tool_calls[${index}].function.arguments`,
      }),
    })),
  toolResult: (message: Message, position: number, toolCallId: string): AnthropicRequestBlock => ({
    type: 'tool_result',
    tool_use_id: toolCallId,
    content:
      typeof message.content === 'string'
        ? message.content
        : contentBlocks(message.content, `messages[${position}].content`),
  }),
};

/**
 * OpenAI-shaped messages as an Anthropic prompt: system and developer messages move to `system`; tool
 * results become `tool_result` blocks of a user turn; and because Anthropic wants user and assistant turns
 * to alternate, consecutive messages of the same role (several tool results, a user text after them) merge.
 */
export function convertToAnthropicMessages(messages: readonly Message[]): AnthropicPrompt {
  const { system, turns } = toAlternatingTurns(messages, ANTHROPIC_BLOCKS);
  if (system.length === 0) return { system: undefined, messages: turns };
  if (!system.some((entry) => entry.cacheControl)) {
    return { system: system.map((entry) => entry.text).join('\n\n'), messages: turns };
  }
  const blocks = system.map(({ text, cacheControl }) =>
    cacheControl ? { type: 'text', text, cache_control: cacheControl } : { type: 'text', text },
  );
  return { system: blocks, messages: turns };
}
