import { type Message, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';
import { functionTool } from '../shared/chat-parts.ts';
import { Untranslatable } from '../shared/untranslatable.ts';

const contentPartSchema = z.looseObject({ type: z.string() });

const messageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPartSchema)]),
});
const functionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPartSchema)]),
});

const functionToolSchema = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

/** The members of a Responses API request gw understands; others are refused or ignored as documented. */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({}))]),
  instructions: z.string().nullish(),
  tools: z.array(functionToolSchema).optional(),
  tool_choice: z
    .union([
      z.enum(['auto', 'none', 'required']),
      z.looseObject({ type: z.string(), name: z.string().optional() }),
    ])
    .optional(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().optional(),
  stream: z.boolean().nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).optional(),
  previous_response_id: z.string().nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

type Part =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: unknown } };

/** Responses content parts as chat content (text, images); other kinds cannot be translated. */
function convertParts(
  parts: Array<Record<string, unknown>>,
  field: string,
  untranslatable: Untranslatable,
): Part[] {
  const converted: Part[] = [];
  for (const [index, part] of parts.entries()) {
    if (part['type'] === 'input_text' || part['type'] === 'output_text' || part['type'] === 'text') {
      converted.push({ type: 'text', text: String(part['text'] ?? '') });
    } else if (part['type'] === 'input_image' && typeof part['image_url'] === 'string') {
      const detail = typeof part['detail'] === 'string' ? { detail: part['detail'] } : {};
      converted.push({ type: 'image_url', image_url: { url: part['image_url'], ...detail } });
    } else {
      untranslatable.note(`${field}[${index}]`, `content of type '${String(part['type'])}'`);
    }
  }
  return converted;
}

function textOf(content: string | Array<Record<string, unknown>>): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part['text'] === 'string' ? part['text'] : '')).join('');
}

/** The input items as chat messages: consecutive function calls join one assistant turn, as chat wants. */
function convertInput(request: ResponsesRequest, untranslatable: Untranslatable): Message[] {
  const messages: Message[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  if (typeof request.input === 'string') {
    messages.push({ role: 'user', content: request.input });
    return messages;
  }
  for (const [index, item] of request.input.entries()) {
    const field = `input[${index}]`;
    const type = item['type'] ?? 'message';
    if (type === 'message') {
      const message = validate(messageItemSchema, item, field);
      const content =
        typeof message.content === 'string'
          ? message.content
          : message.role === 'user'
            ? convertParts(message.content, `${field}.content`, untranslatable)
            : textOf(message.content);
      messages.push({ role: message.role, content });
    } else if (type === 'function_call') {
      const call = validate(functionCallItemSchema, item, field);
      const toolCall = {
        type: 'function' as const,
        id: call.call_id,
        function: { name: call.name, arguments: call.arguments },
      };
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), toolCall];
      else messages.push({ role: 'assistant', content: null, tool_calls: [toolCall] });
    } else if (type === 'function_call_output') {
      const output = validate(functionCallOutputItemSchema, item, field);
      messages.push({ role: 'tool', tool_call_id: output.call_id, content: textOf(output.output) });
    } else if (type === 'reasoning') {
      // Reasoning items of an earlier answer carry nothing a chat model can take back.
    } else {
      untranslatable.note(field, `an item of type '${String(type)}'`);
    }
  }
  return messages;
}

/** Function tools; OpenAI's own tools (web search, shell, custom, namespaces…) run only at OpenAI. */
function convertTools(
  tools: ResponsesRequest['tools'],
  untranslatable: Untranslatable,
): unknown[] | undefined {
  if (!tools?.length) return undefined;
  const converted: unknown[] = [];
  for (const [index, tool] of tools.entries()) {
    if (tool.type === 'function' && tool.name) converted.push(functionTool({ ...tool, name: tool.name }));
    else untranslatable.note(`tools[${index}]`, `a tool of type '${tool.type}'`);
  }
  return converted;
}

function convertToolChoice(choice: ResponsesRequest['tool_choice'], untranslatable: Untranslatable): unknown {
  if (choice === undefined || typeof choice === 'string') return choice;
  if (choice.type === 'function' && choice.name) return { type: 'function', function: { name: choice.name } };
  untranslatable.note('tool_choice', `a tool choice of type '${choice.type}'`);
  return undefined;
}

function convertFormat(format: Record<string, unknown> | undefined, untranslatable: Untranslatable): unknown {
  if (!format || format['type'] === 'text') return undefined;
  if (format['type'] === 'json_object') return { type: 'json_object' };
  if (format['type'] === 'json_schema') {
    const { type: _type, ...schema } = format;
    return { type: 'json_schema', json_schema: schema };
  }
  untranslatable.note('text.format', `a format of type '${String(format['type'])}'`);
  return undefined;
}

/**
 * A Responses API request as a chat completion, beside the request as it came for OpenAI's own Responses
 * API. gw keeps no conversation state, so `previous_response_id` only works when OpenAI serves (it keeps
 * them); any other provider refuses it, and the caller sends the whole conversation in `input`.
 */
export function responsesToChat(body: unknown, target: (model: string) => Target): ParsedCompletion {
  const request = validate(responsesRequestSchema, body);
  const untranslatable = new Untranslatable();
  if (request.previous_response_id) {
    untranslatable.note('previous_response_id', 'a stored conversation (gw keeps none; send it in input)');
  }
  const params: Record<string, unknown> = {};
  const tools = convertTools(request.tools, untranslatable);
  if (tools?.length) params['tools'] = tools;
  const toolChoice = convertToolChoice(request.tool_choice, untranslatable);
  if (toolChoice !== undefined && tools?.length) params['tool_choice'] = toolChoice;
  if (request.max_output_tokens) params['max_tokens'] = request.max_output_tokens;
  if (typeof request.temperature === 'number') params['temperature'] = request.temperature;
  if (typeof request.top_p === 'number') params['top_p'] = request.top_p;
  if (typeof request.parallel_tool_calls === 'boolean' && tools?.length)
    params['parallel_tool_calls'] = request.parallel_tool_calls;
  if (request.user) params['user'] = request.user;
  // The Responses API's reasoning effort is chat's (other providers map it to a thinking budget).
  const effort = (body as { reasoning?: { effort?: unknown } }).reasoning?.effort;
  if (typeof effort === 'string') params['reasoning_effort'] = effort;
  const format = convertFormat(request.text?.format, untranslatable);
  if (format) params['response_format'] = format;
  const messages = convertInput(request, untranslatable);
  return {
    operation: 'chat',
    target: target(request.model),
    fallbacks: [],
    messages,
    params,
    stream: request.stream === true,
    native: {
      format: 'openai-responses',
      body: body as Record<string, unknown>,
      headers: {},
      untranslatable: untranslatable.first,
    },
  };
}
