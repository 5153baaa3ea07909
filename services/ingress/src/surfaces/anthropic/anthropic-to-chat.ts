import { invalidRequest, type Message, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';
import { functionTool } from '../shared/chat-parts.ts';
import { Untranslatable } from '../shared/untranslatable.ts';

const blockSchema = z.looseObject({ type: z.string() });

const messageSchema = z.looseObject({
  // Claude Code sends system turns mid-conversation; Anthropic takes them.
  role: z.enum(['user', 'assistant', 'system']),
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
type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A part with the block's cache breakpoint, which chat carries on parts (docs/surfaces.md). */
function withCacheControl<P extends Part>(part: P, block: Block): P {
  const cacheControl = block['cache_control'];
  return cacheControl && typeof cacheControl === 'object' ? { ...part, cache_control: cacheControl } : part;
}

/**
 * A Messages request in chat terms (docs/surfaces.md "Anthropic in, another provider out"). What chat cannot
 * say is recorded, not thrown: the request may still be served verbatim by a provider of Anthropic's format,
 * and any other provider refuses it with a 400 naming the first such member (router-service.ts
 * NativeRequest.untranslatable). Thinking blocks of earlier turns are left out (other providers cannot take
 * them back); a tool result's error flag becomes an `Error: ` prefix; its images follow it as a user turn.
 */
class MessagesTranslation {
  readonly messages: Message[] = [];
  readonly untranslatable = new Untranslatable();

  private cannot(param: string, what: string): void {
    this.untranslatable.note(param, what);
  }

  private text(blocks: Block[], field: string): string {
    const texts: string[] = [];
    for (const [index, block] of blocks.entries()) {
      if (block['type'] === 'text') texts.push(String(block['text'] ?? ''));
      else this.cannot(`${field}[${index}]`, `a '${String(block['type'])}' block here`);
    }
    return texts.join('\n');
  }

  /** An image block as an OpenAI image part (a data URL for base64 sources). */
  private image(block: Block, field: string): Part | undefined {
    const source = block['source'] as Block | undefined;
    if (source?.['type'] === 'base64') {
      return {
        type: 'image_url',
        image_url: { url: `data:${source['media_type']};base64,${source['data']}` },
      };
    }
    if (source?.['type'] === 'url' && typeof source['url'] === 'string') {
      return { type: 'image_url', image_url: { url: source['url'] } };
    }
    this.cannot(`${field}.source`, `an image source of type '${String(source?.['type'])}'`);
    return undefined;
  }

  /** System blocks as one system message; as text parts when one sets a cache breakpoint, to keep it. */
  system(content: string | Block[], field: string): void {
    if (typeof content !== 'string' && content.some((block) => block['cache_control'])) {
      this.text(content, field);
      const parts = content
        .filter((block) => block['type'] === 'text' && block['text'])
        .map((block) => withCacheControl({ type: 'text', text: String(block['text']) }, block));
      if (parts.length > 0) this.messages.push({ role: 'system', content: parts });
      return;
    }
    const text = typeof content === 'string' ? content : this.text(content, field);
    if (text) this.messages.push({ role: 'system', content: text });
  }

  /**
   * A user turn: its tool results become tool messages (chat wants them right after the assistant's calls),
   * the images inside them and the rest one user message after them.
   */
  user(content: string | Block[], field: string): void {
    if (typeof content === 'string') {
      this.messages.push({ role: 'user', content });
      return;
    }
    const parts: Part[] = [];
    for (const [index, block] of content.entries()) {
      const blockField = `${field}[${index}]`;
      if (block['type'] === 'tool_result') {
        this.messages.push({
          role: 'tool',
          tool_call_id: String(block['tool_use_id']),
          content: this.toolResult(block, blockField, parts),
        });
      } else if (block['type'] === 'text') {
        parts.push(withCacheControl({ type: 'text', text: String(block['text'] ?? '') }, block));
      } else if (block['type'] === 'image') {
        const image = this.image(block, blockField);
        if (image) parts.push(withCacheControl(image, block));
      } else {
        this.cannot(blockField, `a content block of type '${String(block['type'])}'`);
      }
    }
    if (parts.length > 0) this.messages.push({ role: 'user', content: parts });
  }

  private toolResult(block: Block, field: string, images: Part[]): string {
    const content = block['content'];
    const texts: string[] = [];
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const [index, part] of (content as Block[]).entries()) {
        if (part['type'] === 'text') texts.push(String(part['text'] ?? ''));
        else if (part['type'] === 'image') {
          const image = this.image(part, `${field}.content[${index}]`);
          if (image) images.push(image);
        } else
          this.cannot(`${field}.content[${index}]`, `a '${String(part['type'])}' block in a tool result`);
      }
    }
    const text = texts.join('\n');
    return block['is_error'] === true ? `Error: ${text}` : text;
  }

  assistant(content: string | Block[], field: string): void {
    if (typeof content === 'string') {
      this.messages.push({ role: 'assistant', content });
      return;
    }
    const texts: string[] = [];
    const toolCalls: Array<{ type: 'function'; id: string; function: { name: string; arguments: string } }> =
      [];
    for (const [index, block] of content.entries()) {
      const type = block['type'];
      if (type === 'text') texts.push(String(block['text'] ?? ''));
      else if (type === 'tool_use') {
        toolCalls.push({
          type: 'function',
          id: String(block['id']),
          function: { name: String(block['name']), arguments: JSON.stringify(block['input'] ?? {}) },
        });
      } else if (type !== 'thinking' && type !== 'redacted_thinking') {
        this.cannot(`${field}[${index}]`, `a content block of type '${String(type)}'`);
      }
    }
    const text = texts.join('\n');
    this.messages.push({
      role: 'assistant',
      content: text || (toolCalls.length > 0 ? null : ''),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
  }

  /** Function tools for chat; Anthropic's server tools have no chat equivalent. */
  tools(tools: AnthropicRequest['tools']): unknown[] | undefined {
    if (!tools?.length) return undefined;
    const converted: unknown[] = [];
    for (const [index, tool] of tools.entries()) {
      if (tool.type !== undefined && tool.type !== 'custom') {
        this.cannot(`tools[${index}]`, `the server tool '${tool.type}'`);
      } else {
        converted.push(
          functionTool({ name: tool.name, description: tool.description, parameters: tool.input_schema }),
        );
      }
    }
    return converted;
  }
}

function translateMessages(request: Pick<AnthropicRequest, 'system' | 'messages'>): MessagesTranslation {
  const translation = new MessagesTranslation();
  if (request.system !== undefined) translation.system(request.system, 'system');
  for (const [index, message] of request.messages.entries()) {
    const field = `messages[${index}].content`;
    if (message.role === 'user') translation.user(message.content, field);
    else if (message.role === 'assistant') translation.assistant(message.content, field);
    else translation.system(message.content, field);
  }
  return translation;
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

/** A `count_tokens` body: a Messages request that need not say how long its answer may be. */
const countedRequestSchema = anthropicRequestSchema.partial({ max_tokens: true });

/**
 * An Anthropic Messages request as a chat completion, servable by any provider; `counting`: the body of a
 * `count_tokens` call, without `max_tokens`.
 */
export function anthropicToChat(
  body: unknown,
  target: (model: string) => Target,
  options: { counting?: boolean } = {},
): ParsedCompletion {
  const request = validate(options.counting ? countedRequestSchema : anthropicRequestSchema, body);
  const resolved = target(request.model);
  const params: Record<string, unknown> = {};
  if (request.max_tokens !== undefined) params['max_tokens'] = request.max_tokens;
  const translation = translateMessages(request);
  const tools = translation.tools(request.tools);
  if (tools?.length) {
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
    messages: translation.messages,
    params,
    native: {
      format: 'anthropic',
      body: body as Record<string, unknown>,
      headers: {},
      untranslatable: translation.untranslatable.first,
    },
    stream: request.stream === true,
  };
}
