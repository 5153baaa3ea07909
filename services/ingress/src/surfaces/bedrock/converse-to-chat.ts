import { type Message, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';
import { functionTool, userMessage } from '../shared/chat-parts.ts';
import { Untranslatable } from '../shared/untranslatable.ts';

const blockSchema = z.looseObject({});

/** A Converse / ConverseStream request body (what the AWS SDK serializes; bytes arrive base64-encoded). */
const converseRequestSchema = z.looseObject({
  messages: z
    .array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.array(blockSchema) }))
    .min(1),
  system: z.array(blockSchema).optional(),
  inferenceConfig: z
    .looseObject({
      maxTokens: z.number().int().positive().optional(),
      temperature: z.number().optional(),
      topP: z.number().optional(),
      stopSequences: z.array(z.string()).optional(),
    })
    .optional(),
  toolConfig: z
    .looseObject({
      tools: z.array(blockSchema).optional(),
      toolChoice: z.looseObject({}).optional(),
    })
    .optional(),
  additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
});

type Block = Record<string, unknown>;
type ConverseRequest = z.infer<typeof converseRequestSchema>;

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

function imagePart(image: Block, field: string, untranslatable: Untranslatable) {
  const source = image['source'] as Block | undefined;
  const mediaType = IMAGE_TYPES[String(image['format'])];
  if (!mediaType || typeof source?.['bytes'] !== 'string') {
    untranslatable.note(`${field}.image`, 'an image other than png, jpeg, gif or webp bytes');
    return undefined;
  }
  return { type: 'image_url' as const, image_url: { url: `data:${mediaType};base64,${source['bytes']}` } };
}

function toolResultText(result: Block): string {
  const content = Array.isArray(result['content']) ? (result['content'] as Block[]) : [];
  const text = content
    .map((item) =>
      typeof item['text'] === 'string'
        ? item['text']
        : item['json'] !== undefined
          ? JSON.stringify(item['json'])
          : '',
    )
    .join('');
  return result['status'] === 'error' ? `Error: ${text}` : text;
}

type TextPart = { type: 'text'; text: string; cache_control?: { type: string } };

/** Converse's cache point as chat's marker on the part it closes (Anthropic's `cache_control`). */
function markCached(parts: object[]): void {
  const last = parts[parts.length - 1] as { cache_control?: { type: string } } | undefined;
  if (last) last.cache_control = { type: 'ephemeral' };
}

function convertMessages(request: ConverseRequest, untranslatable: Untranslatable): Message[] {
  const messages: Message[] = [];
  const systemBlocks = request.system ?? [];
  if (systemBlocks.some((block) => block['cachePoint'])) {
    // A cache point closes what precedes it: chat carries it on that part (docs/surfaces.md).
    const parts: TextPart[] = [];
    for (const block of systemBlocks) {
      if (typeof block['text'] === 'string' && block['text'])
        parts.push({ type: 'text', text: block['text'] });
      else if (block['cachePoint']) markCached(parts);
    }
    if (parts.length > 0) messages.push({ role: 'system', content: parts });
  } else {
    const system = systemBlocks
      .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
      .filter(Boolean)
      .join('\n');
    if (system) messages.push({ role: 'system', content: system });
  }
  for (const [index, message] of request.messages.entries()) {
    const field = `messages[${index}].content`;
    if (message.role === 'assistant') {
      const text = message.content
        .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
        .join('');
      const calls = message.content
        .map((block) => block['toolUse'] as Block | undefined)
        .filter((toolUse): toolUse is Block => toolUse !== undefined)
        .map((toolUse) => ({
          type: 'function' as const,
          id: String(toolUse['toolUseId']),
          function: { name: String(toolUse['name']), arguments: JSON.stringify(toolUse['input'] ?? {}) },
        }));
      messages.push({
        role: 'assistant',
        content: text || (calls.length > 0 ? null : ''),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      continue;
    }
    const parts: Array<{ type: 'text'; text: string } | NonNullable<ReturnType<typeof imagePart>>> = [];
    for (const [blockIndex, block] of message.content.entries()) {
      const blockField = `${field}[${blockIndex}]`;
      if (block['toolResult']) {
        const result = block['toolResult'] as Block;
        messages.push({
          role: 'tool',
          tool_call_id: String(result['toolUseId']),
          content: toolResultText(result),
        });
      } else if (typeof block['text'] === 'string') parts.push({ type: 'text', text: block['text'] });
      else if (block['image']) {
        const image = imagePart(block['image'] as Block, blockField, untranslatable);
        if (image) parts.push(image);
      } else if (block['cachePoint']) markCached(parts);
      else untranslatable.note(blockField, `a '${Object.keys(block)[0]}' block`);
    }
    const user = userMessage(parts);
    if (user) messages.push(user);
  }
  return messages;
}

function convertTools(
  request: ConverseRequest,
  params: Record<string, unknown>,
  untranslatable: Untranslatable,
): void {
  const tools: unknown[] = [];
  for (const [index, tool] of (request.toolConfig?.tools ?? []).entries()) {
    if (tool['cachePoint']) continue;
    const spec = tool['toolSpec'] as Block | undefined;
    if (!spec) {
      untranslatable.note(`toolConfig.tools[${index}]`, `a '${Object.keys(tool)[0]}' tool`);
      continue;
    }
    const schema = (spec['inputSchema'] as Block | undefined)?.['json'];
    tools.push(
      functionTool({ name: String(spec['name']), description: spec['description'], parameters: schema }),
    );
  }
  if (tools.length === 0) return;
  params['tools'] = tools;
  const choice = request.toolConfig?.toolChoice as Block | undefined;
  if (choice?.['any']) params['tool_choice'] = 'required';
  else if (choice?.['tool']) {
    params['tool_choice'] = {
      type: 'function',
      function: { name: String((choice['tool'] as Block)['name']) },
    };
  } else if (choice?.['auto']) params['tool_choice'] = 'auto';
}

/**
 * A Converse request as a chat completion, servable by any provider, beside the request as it came for
 * Bedrock itself (cache points, guardrails, reasoning content and fields gw does not know reach only it).
 */
export function converseToChat(options: {
  body: unknown;
  target: Target;
  stream: boolean;
}): ParsedCompletion {
  const request = validate(converseRequestSchema, options.body);
  const params: Record<string, unknown> = {};
  const inference = request.inferenceConfig;
  if (inference?.maxTokens) params['max_tokens'] = inference.maxTokens;
  if (inference?.temperature !== undefined) params['temperature'] = inference.temperature;
  if (inference?.topP !== undefined) params['top_p'] = inference.topP;
  if (inference?.stopSequences?.length) params['stop'] = inference.stopSequences;
  const untranslatable = new Untranslatable();
  convertTools(request, params, untranslatable);
  const messages = convertMessages(request, untranslatable);
  return {
    operation: 'chat',
    target: options.target,
    fallbacks: [],
    messages,
    params,
    stream: options.stream,
    native: {
      format: 'converse',
      body: options.body as Record<string, unknown>,
      headers: {},
      untranslatable: untranslatable.first,
    },
  };
}
