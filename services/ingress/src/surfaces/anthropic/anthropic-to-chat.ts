import { invalidRequest, type Message, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../core/parse-request.ts';
import { functionTool } from '../shared/chat-parts.ts';
import { tokensOfLength } from '../shared/estimate-tokens.ts';

const blockSchema = z.looseObject({ type: z.string() });

const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(blockSchema)]),
});

const toolSchema = z.looseObject({
  type: z.string().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
});

const toolChoiceSchema = z.looseObject({
  type: z.enum(['auto', 'any', 'tool', 'none']),
  name: z.string().optional(),
  disable_parallel_tool_use: z.boolean().optional(),
});

/** An Anthropic Messages API request (the members gw translates; others are named where refused). */
export const anthropicRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(messageSchema).min(1),
  system: z.union([z.string(), z.array(blockSchema)]).optional(),
  tools: z.array(toolSchema).optional(),
  tool_choice: toolChoiceSchema.optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().optional(),
});

export type AnthropicRequest = z.infer<typeof anthropicRequestSchema>;

/** Members only Anthropic understands: forwarded when Anthropic serves, dropped for other providers. */
const ANTHROPIC_ONLY = ['top_k', 'thinking', 'metadata', 'service_tier'] as const;

type Block = Record<string, unknown>;

function textOfBlocks(blocks: Block[]): string {
  return blocks
    .filter((block) => block['type'] === 'text')
    .map((block) => String(block['text'] ?? ''))
    .join('\n');
}

/** An image block as an OpenAI image part (a data URL for base64 sources). */
function imagePart(block: Block, field: string) {
  const source = block['source'] as Block | undefined;
  if (source?.['type'] === 'base64') {
    return {
      type: 'image_url' as const,
      image_url: { url: `data:${source['media_type']};base64,${source['data']}` },
    };
  }
  if (source?.['type'] === 'url' && typeof source['url'] === 'string') {
    return { type: 'image_url' as const, image_url: { url: source['url'] } };
  }
  throw invalidRequest(`${field}.source: only base64 and url image sources are supported`, `${field}.source`);
}

function toolResultContent(block: Block): string {
  const content = block['content'];
  const text =
    typeof content === 'string' ? content : Array.isArray(content) ? textOfBlocks(content as Block[]) : '';
  return block['is_error'] === true ? `Error: ${text}` : text;
}

/**
 * A user turn: its tool results become tool messages (chat wants them right after the assistant's calls),
 * the rest one user message.
 */
function convertUser(content: string | Block[], field: string): Message[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const messages: Message[] = [];
  const parts: Array<{ type: 'text'; text: string } | ReturnType<typeof imagePart>> = [];
  for (const [index, block] of content.entries()) {
    const blockField = `${field}[${index}]`;
    if (block['type'] === 'tool_result') {
      messages.push({
        role: 'tool',
        tool_call_id: String(block['tool_use_id']),
        content: toolResultContent(block),
      });
    } else if (block['type'] === 'text') {
      parts.push({ type: 'text', text: String(block['text'] ?? '') });
    } else if (block['type'] === 'image') {
      parts.push(imagePart(block, blockField));
    } else {
      throw invalidRequest(
        `${blockField}: content blocks of type '${String(block['type'])}' are not supported by gw's Messages surface`,
        blockField,
      );
    }
  }
  if (parts.length > 0) messages.push({ role: 'user', content: parts });
  return messages;
}

function convertAssistant(content: string | Block[]): Message {
  if (typeof content === 'string') return { role: 'assistant', content };
  const toolCalls = content
    .filter((block) => block['type'] === 'tool_use')
    .map((block) => ({
      type: 'function' as const,
      id: String(block['id']),
      function: { name: String(block['name']), arguments: JSON.stringify(block['input'] ?? {}) },
    }));
  const text = textOfBlocks(content);
  // Thinking blocks of earlier turns are not sent on: other providers cannot take them back.
  return {
    role: 'assistant',
    content: text || (toolCalls.length > 0 ? null : ''),
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

export function convertAnthropicMessages(request: Pick<AnthropicRequest, 'system' | 'messages'>): Message[] {
  const messages: Message[] = [];
  if (request.system !== undefined) {
    const system = typeof request.system === 'string' ? request.system : textOfBlocks(request.system);
    if (system) messages.push({ role: 'system', content: system });
  }
  for (const [index, message] of request.messages.entries()) {
    if (message.role === 'user') messages.push(...convertUser(message.content, `messages[${index}].content`));
    else messages.push(convertAssistant(message.content));
  }
  return messages;
}

function convertTools(tools: AnthropicRequest['tools']): unknown[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((tool, index) => {
    if (tool.type !== undefined && tool.type !== 'custom') {
      throw invalidRequest(
        `tools[${index}]: server tools ('${tool.type}') are not supported by gw's Messages surface`,
        `tools[${index}]`,
      );
    }
    return functionTool({ name: tool.name, description: tool.description, parameters: tool.input_schema });
  });
}

function convertToolChoice(choice: AnthropicRequest['tool_choice'], params: Record<string, unknown>): void {
  if (!choice) return;
  if (choice.type === 'auto') params['tool_choice'] = 'auto';
  else if (choice.type === 'any') params['tool_choice'] = 'required';
  else if (choice.type === 'none') params['tool_choice'] = 'none';
  else {
    if (!choice.name) throw invalidRequest('tool_choice.name: is required for type tool', 'tool_choice.name');
    params['tool_choice'] = { type: 'function', function: { name: choice.name } };
  }
  if (choice.disable_parallel_tool_use) params['parallel_tool_calls'] = false;
}

/** An Anthropic Messages request as a chat completion, servable by any provider. */
export function anthropicToChat(
  body: unknown,
  bodyBytes: number,
  target: (model: string) => Target,
): ParsedCompletion {
  const request = validate(anthropicRequestSchema, body);
  const resolved = target(request.model);
  const params: Record<string, unknown> = { max_tokens: request.max_tokens };
  const tools = convertTools(request.tools);
  if (tools) {
    params['tools'] = tools;
    convertToolChoice(request.tool_choice, params);
  }
  if (request.stop_sequences?.length) params['stop'] = request.stop_sequences;
  if (request.temperature !== undefined) params['temperature'] = request.temperature;
  if (request.top_p !== undefined) params['top_p'] = request.top_p;
  if (request.metadata?.user_id) params['user'] = request.metadata.user_id;
  if (resolved.provider === 'anthropic') {
    const record = request as Record<string, unknown>;
    for (const name of ANTHROPIC_ONLY) if (record[name] !== undefined) params[name] = record[name];
  }
  return {
    operation: 'chat',
    target: resolved,
    fallbacks: [],
    messages: convertAnthropicMessages(request),
    params,
    stream: request.stream === true,
    promptTokens: tokensOfLength(bodyBytes),
  };
}
