import { type ContentPart, GatewayError, type Message } from '@gw/shared';
import { textOf } from '../message-parts.ts';

type CohereContent = string | Array<Record<string, unknown>>;

export type CohereMessage =
  | { role: 'system' | 'user'; content: CohereContent }
  | {
      role: 'assistant';
      content?: CohereContent;
      tool_plan?: string;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: CohereContent };

/** Text and image parts have the same shape in Cohere v2 as in OpenAI, less fields Cohere does not know. */
function convertPart(part: ContentPart): Record<string, unknown> {
  if (part.type === 'text') return { type: 'text', text: (part as { text: string }).text };
  if (part.type === 'image_url') {
    const { url, detail } = (part as { image_url: { url: string; detail?: string } }).image_url;
    return { type: 'image_url', image_url: detail ? { url, detail } : { url } };
  }
  // Other part types (documents…) go through as sent; Cohere answers 400 when it does not know them.
  return part as Record<string, unknown>;
}

function convertContent(content: Message['content']): CohereContent {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map(convertPart);
}

function convertAssistant(message: Message): CohereMessage {
  const toolCalls = message.tool_calls ?? [];
  if (toolCalls.length === 0) return { role: 'assistant', content: convertContent(message.content) };
  // Text written alongside tool calls is what Cohere calls the `tool_plan`; a `tool_plan` member (a client
  // replaying Cohere's raw message) wins.
  const explicitPlan = (message as { tool_plan?: unknown }).tool_plan;
  const plan = typeof explicitPlan === 'string' ? explicitPlan : textOf(message.content, '');
  return {
    role: 'assistant',
    ...(plan ? { tool_plan: plan } : {}),
    tool_calls: toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.function.name, arguments: call.function.arguments },
    })),
  };
}

function convertMessage(message: Message): CohereMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: convertContent(message.content) };
    case 'user':
      return { role: 'user', content: convertContent(message.content) };
    case 'assistant':
      return convertAssistant(message);
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.tool_call_id ?? '',
        content: convertContent(message.content),
      };
    case 'function':
      // Legacy function results carry no call id, which Cohere needs to pair a result with its call.
      throw new GatewayError({
        type: 'invalid_request',
        message: 'cohere does not accept messages with role "function"; send role "tool" with a tool_call_id',
        param: 'messages',
      });
  }
}

/** OpenAI-shaped messages as Cohere v2 `messages`. */
export function convertToCohereMessages(messages: Message[]): CohereMessage[] {
  return messages.map(convertMessage);
}
