import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult } from '@gw/governance';
import type { RequestMetadata, SideTexts } from '@gw/guardrails';
import type { CompletionRoute } from '@gw/router';
import type { ChatChoice, CompletionResponse, Message, TextChoice } from '@gw/shared';

/** Headers a condition never sees: the caller's credentials. */
const HIDDEN_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'x-gw-vk',
]);

/** What a rule's condition sees of a request (docs/guardrails.md "Conditions"). */
export function requestMetadata(options: {
  headers: IncomingHttpHeaders;
  authorization: AuthorizeResult | undefined;
  request_type: 'chat' | 'text' | 'tool';
  target?: { provider: string; model: string } | undefined;
  tool?: { client: string; tool: string; arguments: Record<string, unknown> };
}): RequestMetadata {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const authorization = options.authorization;
  return {
    request_type: options.request_type,
    model: options.target?.model ?? '',
    provider: options.target?.provider ?? '',
    headers,
    virtual_key: authorization?.virtualKeyName ?? '',
    virtual_key_id: authorization?.virtualKeyId ?? '',
    team: authorization?.teamId ?? '',
    customer: authorization?.customerId ?? '',
    user: authorization?.userId ?? '',
    mcp_client: options.tool?.client ?? '',
    tool: options.tool?.tool ?? '',
    arguments: options.tool?.arguments ?? {},
  };
}

/** Texts of one side and how to put changed ones back where they came from. */
export interface Editable<Value> extends SideTexts {
  rewrite(texts: readonly string[]): Value;
}

/** The texts of a request: each message's text (string content and text parts), or the prompt. */
export function inputTexts(route: CompletionRoute): Editable<CompletionRoute> {
  if (route.operation === 'text') {
    const prompts = Array.isArray(route.prompt) ? route.prompt : [route.prompt];
    return {
      texts: prompts,
      locations: prompts.map((_, index) => (Array.isArray(route.prompt) ? `prompt[${index}]` : 'prompt')),
      rewrite: (texts) => ({ ...route, prompt: Array.isArray(route.prompt) ? [...texts] : (texts[0] ?? '') }),
    };
  }
  const texts: string[] = [];
  const locations: string[] = [];
  route.messages.forEach((message, index) => {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      locations.push(`messages[${index}].content`);
    } else if (Array.isArray(message.content)) {
      message.content.forEach((part, position) => {
        if (part.type === 'text' && typeof part['text'] === 'string') {
          texts.push(part['text']);
          locations.push(`messages[${index}].content[${position}].text`);
        }
      });
    }
  });
  return {
    texts,
    locations,
    rewrite(changed) {
      let next = 0;
      const messages = route.messages.map((message): Message => {
        if (typeof message.content === 'string') return { ...message, content: changed[next++] ?? '' };
        if (!Array.isArray(message.content)) return message;
        const content = message.content.map((part) =>
          part.type === 'text' && typeof part['text'] === 'string'
            ? { ...part, text: changed[next++] ?? '' }
            : part,
        );
        return { ...message, content } as Message;
      });
      return { ...route, messages };
    },
  };
}

/** The texts of an answer: each choice's message content, or its text. */
export function outputTexts(response: CompletionResponse): Editable<CompletionResponse> {
  const texts: string[] = [];
  const locations: string[] = [];
  const slots: number[] = [];
  const messageOf = (choice: ChatChoice | TextChoice) =>
    'message' in choice && typeof choice.message === 'object' && choice.message !== null
      ? (choice as ChatChoice).message
      : undefined;
  response.choices.forEach((choice, index) => {
    const message = messageOf(choice);
    if (typeof message?.content === 'string') {
      texts.push(message.content);
      locations.push(`choices[${index}].message.content`);
      slots.push(index);
    } else if ('text' in choice && typeof choice.text === 'string') {
      texts.push(choice.text);
      locations.push(`choices[${index}].text`);
      slots.push(index);
    }
  });
  return {
    texts,
    locations,
    rewrite(changed) {
      const choices = response.choices.map((choice, index) => {
        const slot = slots.indexOf(index);
        if (slot === -1) return choice;
        const text = changed[slot] ?? '';
        const message = messageOf(choice);
        return message ? { ...choice, message: { ...message, content: text } } : { ...choice, text };
      });
      return { ...response, choices } as CompletionResponse;
    },
  };
}
