import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult } from '@gw/governance';
import type { RequestMetadata, SideTexts } from '@gw/guardrails';
import type { CompletionRoute, EmbeddingsRoute, TextRoute } from '@gw/router';
import type { ChatChoice, CompletionResponse, Message, TextChoice } from '@gw/shared';
import { visibleHeaders } from '../request/visible-headers.ts';
import { jsonTexts, rewriteJson } from './guardrail-json-texts.ts';

/** What a rule's condition sees of a request (docs/guardrails.md "Conditions"). */
export function requestMetadata(options: {
  headers: IncomingHttpHeaders;
  authorization: AuthorizeResult | undefined;
  request_type: 'chat' | 'text' | 'tool';
  target?: { provider: string; model: string } | undefined;
  tool?: { client: string; tool: string; arguments: Record<string, unknown> };
}): RequestMetadata {
  const headers = visibleHeaders(options.headers);
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

/**
 * The texts of a request: every text the provider receives (jsonTexts): the messages' contents, tool calls
 * and their arguments, the prompt, and the params (tool definitions with their schemas, `response_format`,
 * `prediction`, stop sequences…). A request the provider may take in the caller's own format also has the
 * texts only that format carries checked (`native.…`); a change to any text sends the translation instead.
 */
export function inputTexts(route: CompletionRoute): Editable<CompletionRoute> {
  const body: Record<string, unknown> =
    route.operation === 'text'
      ? { ...route.params, prompt: route.prompt }
      : { ...route.params, messages: route.messages };
  const found = jsonTexts(body);
  const texts = [...found.texts];
  const locations = [...found.locations];
  if (route.operation === 'chat' && route.native) {
    const known = new Set(found.texts);
    const native = jsonTexts(route.native.body, 'native');
    native.texts.forEach((text, index) => {
      if (known.has(text)) return;
      texts.push(text);
      locations.push(native.locations[index]!);
    });
  }
  return {
    texts,
    locations,
    rewrite(changed) {
      const { prompt, messages, ...params } = rewriteJson(
        body,
        found.slots,
        changed.slice(0, found.texts.length),
      );
      if (route.operation === 'text') return { ...route, params, prompt: prompt as TextRoute['prompt'] };
      return { ...route, params, messages: messages as Message[] };
    },
  };
}

/** The texts of an embeddings request: its inputs. */
export function embeddingsInputTexts(route: EmbeddingsRoute): Editable<EmbeddingsRoute> {
  const inputs = Array.isArray(route.input) ? route.input : [route.input];
  return {
    texts: inputs,
    locations: inputs.map((_, index) => (Array.isArray(route.input) ? `input[${index}]` : 'input')),
    rewrite: (changed) => ({
      ...route,
      input: Array.isArray(route.input) ? [...changed] : (changed[0] ?? ''),
    }),
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
