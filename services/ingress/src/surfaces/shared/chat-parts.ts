import type { ContentPart, Message } from '@gw/shared';

/**
 * A user message from translated parts: plain text when every part is text without a cache breakpoint (what
 * every provider takes); parts otherwise.
 */
export function userMessage(parts: ContentPart[]): Message | undefined {
  if (parts.length === 0) return undefined;
  const onlyText = parts.every((part) => part.type === 'text' && !part.cache_control);
  return {
    role: 'user',
    content: onlyText ? parts.map((part) => (part as { text: string }).text).join('') : parts,
  };
}

/** An OpenAI function tool from a surface's tool definition; a tool without a schema takes no arguments. */
export function functionTool(tool: {
  name: string;
  description?: unknown;
  parameters?: unknown;
  strict?: unknown;
}) {
  return {
    type: 'function' as const,
    function: {
      name: tool.name,
      ...(typeof tool.description === 'string' && tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: 'object', properties: {} },
      ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
    },
  };
}
