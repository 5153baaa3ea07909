import { type ContentPart, invalidRequest, type Message } from '@gw/shared';

/** A Converse content block: `{text}`, `{image}`, `{toolUse}` or `{toolResult}`. */
export type BedrockContentBlock =
  | { text: string }
  | { image: { format: BedrockImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string } | { json: unknown }> } };

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockPrompt {
  /** System and developer messages, one block each. */
  system: Array<{ text: string }>;
  messages: BedrockMessage[];
}

type TextPart = Extract<ContentPart, { type: 'text' }>;
type ImagePart = Extract<ContentPart, { type: 'image_url' }>;

const IMAGE_FORMATS = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
} as const;
type BedrockImageFormat = (typeof IMAGE_FORMATS)[keyof typeof IMAGE_FORMATS];

/** `data:<media type>;base64,<data>` */
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** Converse takes image bytes only: it cannot fetch an image URL, so those are refused with the fix. */
function imageBlock(url: string, param: string): BedrockContentBlock {
  const dataUrl = DATA_URL.exec(url);
  if (!dataUrl) {
    throw invalidRequest(
      'bedrock does not fetch image URLs: send the image inline as a data URL (data:image/png;base64,…)',
      param,
    );
  }
  const mediaType = dataUrl[1]!.toLowerCase() === 'image/jpg' ? 'image/jpeg' : dataUrl[1]!.toLowerCase();
  const format = IMAGE_FORMATS[mediaType as keyof typeof IMAGE_FORMATS];
  if (!format) throw invalidRequest(`bedrock takes png, jpeg, gif or webp images, not ${dataUrl[1]}`, param);
  return { image: { format, source: { bytes: dataUrl[2]! } } };
}

function isTextPart(part: ContentPart): part is TextPart {
  return part.type === 'text';
}

function isImagePart(part: ContentPart): part is ImagePart {
  return part.type === 'image_url';
}

/** Parts as Converse blocks. Empty text is dropped: Bedrock rejects blank text blocks. */
function contentBlocks(content: Message['content'], param: string): BedrockContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.flatMap((part: ContentPart, index): BedrockContentBlock[] => {
    if (isTextPart(part)) return part.text ? [{ text: part.text }] : [];
    if (isImagePart(part)) return [imageBlock(part.image_url.url, `${param}[${index}].image_url.url`)];
    throw invalidRequest(`bedrock does not take '${part.type}' content parts`, `${param}[${index}].type`);
  });
}

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .map((part) => (isTextPart(part) ? part.text : ''))
    .filter((text) => text)
    .join('\n');
}

function toolUseBlocks(message: Message, position: number): BedrockContentBlock[] {
  return (message.tool_calls ?? []).map((call, index) => {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      input = undefined;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw invalidRequest(
        'tool call arguments must be a JSON object for bedrock',
        `messages[${position}].tool_calls[${index}].function.arguments`,
      );
    }
    return { toolUse: { toolUseId: call.id, name: call.function.name, input } };
  });
}

/** A JSON object result goes as a `json` block (the model sees structure); anything else as text. */
function toolResultBlock(message: Message, position: number): BedrockContentBlock {
  if (!message.tool_call_id) {
    throw invalidRequest('a tool message needs tool_call_id', `messages[${position}].tool_call_id`);
  }
  const text = textOf(message.content);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
  return { toolResult: { toolUseId: message.tool_call_id, content: [isObject ? { json } : { text }] } };
}

/**
 * OpenAI-shaped messages as a Converse prompt: system and developer messages move to `system`; tool
 * results become `toolResult` blocks of a user turn; and because Converse wants user and assistant turns
 * to alternate, consecutive messages of the same role (several tool results, a user text after them) merge.
 */
export function convertToBedrockMessages(messages: readonly Message[]): BedrockPrompt {
  const system: Array<{ text: string }> = [];
  const converted: BedrockMessage[] = [];

  function append(role: BedrockMessage['role'], blocks: BedrockContentBlock[]): void {
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
        if (text) system.push({ text });
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
          "bedrock does not take the legacy 'function' role; send tool messages",
          `messages[${position}].role`,
        );
    }
  });

  return { system, messages: converted };
}
