import { type ContentPart, invalidRequest, type Message } from '@gw/shared';
import { isTextPart, parseDataUrl, textOf, toAlternatingTurns, toolCallArguments } from '../message-parts.ts';

/** A Converse content block: `{text}`, `{image}`, `{toolUse}` or `{toolResult}`. */
export type BedrockContentBlock =
  | { text: string }
  | { image: { format: BedrockImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string } | { json: unknown }> } }
  | { cachePoint: { type: 'default' } };

/** Converse's prompt-cache breakpoint: what comes before it is cached. */
const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockPrompt {
  /** System and developer messages, one block each, a cache breakpoint after those that set one. */
  system: Array<{ text: string } | { cachePoint: { type: 'default' } }>;
  messages: BedrockMessage[];
}

type ImagePart = Extract<ContentPart, { type: 'image_url' }>;

const IMAGE_FORMATS = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
} as const;
type BedrockImageFormat = (typeof IMAGE_FORMATS)[keyof typeof IMAGE_FORMATS];

/** `data:<media type>;base64,<data>` */
function imageBlock(url: string, param: string): BedrockContentBlock {
  const dataUrl = parseDataUrl(url);
  if (!dataUrl) {
    throw invalidRequest(
      'bedrock does not fetch image URLs: send the image inline as a data URL (data:image/png;base64,…)',
      param,
    );
  }
  const declared = dataUrl.mediaType.toLowerCase();
  const mediaType = declared === 'image/jpg' ? 'image/jpeg' : declared;
  const format = IMAGE_FORMATS[mediaType as keyof typeof IMAGE_FORMATS];
  if (!format)
    throw invalidRequest(`bedrock takes png, jpeg, gif or webp images, not ${dataUrl.mediaType}`, param);
  return { image: { format, source: { bytes: dataUrl.data } } };
}

function isImagePart(part: ContentPart): part is ImagePart {
  return part.type === 'image_url';
}

/** Parts as Converse blocks. Empty text is dropped: Bedrock rejects blank text blocks. */
function contentBlocks(content: Message['content'], param: string): BedrockContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.flatMap((part: ContentPart, index): BedrockContentBlock[] => {
    // A cache breakpoint is Converse's cachePoint block, right after the content it closes.
    const cached = (blocks: BedrockContentBlock[]) =>
      part.cache_control && blocks.length > 0 ? [...blocks, CACHE_POINT] : blocks;
    if (isTextPart(part)) return cached(part.text ? [{ text: part.text }] : []);
    if (isImagePart(part))
      return cached([imageBlock(part.image_url.url, `${param}[${index}].image_url.url`)]);
    throw invalidRequest(`bedrock does not take '${part.type}' content parts`, `${param}[${index}].type`);
  });
}

function toolUseBlocks(message: Message, position: number): BedrockContentBlock[] {
  return (message.tool_calls ?? []).map((call, index) => ({
    toolUse: {
      toolUseId: call.id,
      name: call.function.name,
      input: toolCallArguments(call, {
        provider: 'bedrock',
        param: `messages[${position}].tool_calls[${index}].function.arguments`,
      }),
    },
  }));
}

function toolResultBlock(message: Message, _position: number, toolCallId: string): BedrockContentBlock {
  const text = textOf(message.content);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
  return { toolResult: { toolUseId: toolCallId, content: [isObject ? { json } : { text }] } };
}

/**
 * OpenAI-shaped messages as a Converse prompt: system and developer messages move to `system`; tool
 * results become `toolResult` blocks of a user turn; and because Converse wants user and assistant turns
 * to alternate, consecutive messages of the same role (several tool results, a user text after them) merge.
 */
export function convertToBedrockMessages(messages: readonly Message[]): BedrockPrompt {
  const { system, turns } = toAlternatingTurns(messages, {
    provider: 'bedrock',
    content: contentBlocks,
    toolUses: toolUseBlocks,
    toolResult: toolResultBlock,
  });
  return {
    system: system.flatMap(({ text, cacheControl }) => (cacheControl ? [{ text }, CACHE_POINT] : [{ text }])),
    messages: turns,
  };
}
