import { type ContentPart, invalidRequest, type Message } from '@gw/shared';
import { textOf } from '../message-parts.ts';

export type GeminiPart = Record<string, unknown>;

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiPrompt {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** Gemini wants a MIME type for remote files too; the URL's extension is the best hint there is. */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

function mimeTypeOfUrl(url: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || 'image/jpeg';
}

function imagePart(url: string): GeminiPart {
  const inline = DATA_URL.exec(url);
  if (inline) return { inlineData: { mimeType: inline[1], data: inline[2] } };
  if (/^https?:\/\//i.test(url)) return { fileData: { mimeType: mimeTypeOfUrl(url), fileUri: url } };
  // Files uploaded through Google's File API (gs:// on Vertex) are referenced as they are.
  return { fileData: { mimeType: 'image/jpeg', fileUri: url } };
}

function contentPart(part: ContentPart): GeminiPart {
  if (part.type === 'text') return { text: (part as { text: string }).text };
  if (part.type === 'image_url') return imagePart((part as { image_url: { url: string } }).image_url.url);
  if (part.type === 'input_audio') {
    const audio = (part as { input_audio?: { data?: string; format?: string } }).input_audio;
    return { inlineData: { mimeType: `audio/${audio?.format ?? 'wav'}`, data: audio?.data ?? '' } };
  }
  throw invalidRequest(`content parts of type '${part.type}' are not supported by Gemini`, 'messages');
}

function contentParts(content: Message['content']): GeminiPart[] {
  if (content === null || content === undefined || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map(contentPart);
}

function functionArguments(text: string, name: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text || '{}');
  } catch {
    throw invalidRequest(`the arguments of the tool call '${name}' are not JSON`, 'messages');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidRequest(`the arguments of the tool call '${name}' are not a JSON object`, 'messages');
  }
  return parsed as Record<string, unknown>;
}

/** Gemini wants a function response to be an object: JSON objects go as they are, anything else is wrapped. */
function functionResponse(content: Message['content']): Record<string, unknown> {
  const text = textOf(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {}
  return { content: text };
}

/**
 * Google's documented stand-in for a thought signature that was not kept. Gemini 3 models sign their
 * function calls and reject a replayed call without a signature; OpenAI-shaped tool calls have no place to
 * carry one back, so replayed calls to those models carry this instead.
 */
const SKIPPED_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiMessageOptions {
  /** Mark replayed function calls with SKIPPED_THOUGHT_SIGNATURE (Gemini 3 and later). */
  signFunctionCalls?: boolean;
}

/**
 * OpenAI-shaped messages as Gemini `contents` plus `systemInstruction`. Gemini knows two roles: the
 * assistant is `model`, and tool results travel as `user` turns with functionResponse parts that name the
 * function (found through the tool call id, which Gemini does not know). Consecutive turns of one role are
 * merged because Gemini expects the roles to alternate.
 */
export function convertToGeminiMessages(
  messages: readonly Message[],
  options: GeminiMessageOptions = {},
): GeminiPrompt {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  const functionNames = new Map<string, string>();

  function append(role: GeminiContent['role'], parts: GeminiPart[]) {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }

  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push({ text });
        break;
      }
      case 'user':
        append('user', contentParts(message.content));
        break;
      case 'assistant': {
        const parts = contentParts(message.content);
        for (const call of message.tool_calls ?? []) {
          functionNames.set(call.id, call.function.name);
          parts.push({
            functionCall: {
              name: call.function.name,
              args: functionArguments(call.function.arguments, call.function.name),
            },
            ...(options.signFunctionCalls ? { thoughtSignature: SKIPPED_THOUGHT_SIGNATURE } : {}),
          });
        }
        append('model', parts);
        break;
      }
      case 'tool':
      case 'function': {
        const name =
          (message.tool_call_id ? functionNames.get(message.tool_call_id) : undefined) ?? message.name;
        if (!name) {
          throw invalidRequest(
            `the tool message for '${message.tool_call_id ?? '?'}' answers no earlier tool call`,
            'messages',
          );
        }
        append('user', [{ functionResponse: { name, response: functionResponse(message.content) } }]);
        break;
      }
    }
  }
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}
