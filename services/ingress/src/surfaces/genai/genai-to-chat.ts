import { invalidRequest, type Message, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';
import { userMessage } from '../shared/chat-parts.ts';
import { Untranslatable } from '../shared/untranslatable.ts';

const partSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).optional(),
  fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: z.string() }).optional(),
  functionCall: z
    .looseObject({
      name: z.string(),
      args: z.record(z.string(), z.unknown()).optional(),
      id: z.string().optional(),
    })
    .optional(),
  functionResponse: z
    .looseObject({ name: z.string(), response: z.unknown().optional(), id: z.string().optional() })
    .optional(),
});

const contentSchema = z.looseObject({
  role: z.string().optional(),
  parts: z.array(partSchema),
});

const functionDeclarationSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  parametersJsonSchema: z.unknown().optional(),
});

/** A GenerateContentRequest as the Gemini API takes it (and as @google/genai sends it). */
export const generateContentSchema = z.looseObject({
  contents: z.union([contentSchema, z.array(contentSchema)]),
  systemInstruction: z.union([z.string(), contentSchema]).optional(),
  tools: z
    .array(z.looseObject({ functionDeclarations: z.array(functionDeclarationSchema).optional() }))
    .optional(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({
          mode: z.string().optional(),
          allowedFunctionNames: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  generationConfig: z.looseObject({}).optional(),
});

export type GenerateContentRequest = z.infer<typeof generateContentSchema>;
type Part = z.infer<typeof partSchema>;

/** Gemini's OpenAPI-flavoured schema (`type: 'OBJECT'`, `nullable`) as JSON Schema. */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const converted: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(schema)) {
    if (name === 'propertyOrdering' || name === 'nullable') continue;
    if (name === 'type' && typeof value === 'string') converted[name] = value.toLowerCase();
    else if (name === 'properties' && typeof value === 'object' && value !== null) {
      converted[name] = Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, toJsonSchema(item)]),
      );
    } else converted[name] = toJsonSchema(value);
  }
  if ((schema as Record<string, unknown>)['nullable'] === true && typeof converted['type'] === 'string') {
    converted['type'] = [converted['type'], 'null'];
  }
  return converted;
}

function mediaPart(mimeType: string | undefined, url: string, field: string, untranslatable: Untranslatable) {
  if (!mimeType?.startsWith('image/') && mimeType !== undefined) {
    untranslatable.note(field, `data of type ${mimeType} (only images are)`);
    return undefined;
  }
  return { type: 'image_url' as const, image_url: { url } };
}

/**
 * Gemini function calls carry no id unless the API gave one; chat needs ids that pair each result with
 * its call, so gw makes them (`call_<n>`) and pairs responses by name, oldest unanswered call first.
 */
class CallIds {
  private count = 0;
  private readonly pending = new Map<string, string[]>();
  call(name: string, id: string | undefined): string {
    const assigned = id ?? `call_${this.count}`;
    this.count++;
    this.pending.set(name, [...(this.pending.get(name) ?? []), assigned]);
    return assigned;
  }
  response(name: string, id: string | undefined): string {
    const queue = this.pending.get(name) ?? [];
    if (id) {
      this.pending.set(
        name,
        queue.filter((candidate) => candidate !== id),
      );
      return id;
    }
    return queue.shift() ?? `call_${name}`;
  }
}

function convertContents(request: GenerateContentRequest, untranslatable: Untranslatable): Message[] {
  const messages: Message[] = [];
  const system = request.systemInstruction;
  if (system !== undefined) {
    const text =
      typeof system === 'string'
        ? system
        : system.parts
            .map((part) => part.text ?? '')
            .filter(Boolean)
            .join('\n');
    if (text) messages.push({ role: 'system', content: text });
  }
  const ids = new CallIds();
  const contents = Array.isArray(request.contents) ? request.contents : [request.contents];
  for (const [index, content] of contents.entries()) {
    const field = `contents[${index}]`;
    if (content.role === 'model') {
      const text = content.parts
        .filter((part) => part.text !== undefined && !part.thought)
        .map((part) => part.text)
        .join('');
      const calls = content.parts
        .filter(
          (part): part is Part & { functionCall: NonNullable<Part['functionCall']> } => !!part.functionCall,
        )
        .map((part) => ({
          type: 'function' as const,
          id: ids.call(part.functionCall.name, part.functionCall.id),
          function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
        }));
      messages.push({
        role: 'assistant',
        content: text || (calls.length > 0 ? null : ''),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      continue;
    }
    const parts: Array<{ type: 'text'; text: string } | NonNullable<ReturnType<typeof mediaPart>>> = [];
    for (const [partIndex, part] of content.parts.entries()) {
      const partField = `${field}.parts[${partIndex}]`;
      if (part.functionResponse) {
        const response = part.functionResponse.response;
        messages.push({
          role: 'tool',
          tool_call_id: ids.response(part.functionResponse.name, part.functionResponse.id),
          content: typeof response === 'string' ? response : JSON.stringify(response ?? {}),
        });
      } else if (part.text !== undefined) parts.push({ type: 'text', text: part.text });
      else {
        const media = part.inlineData
          ? mediaPart(
              part.inlineData.mimeType,
              `data:${part.inlineData.mimeType};base64,${part.inlineData.data}`,
              partField,
              untranslatable,
            )
          : part.fileData
            ? mediaPart(part.fileData.mimeType, part.fileData.fileUri, partField, untranslatable)
            : untranslatable.note(partField, `a part with ${Object.keys(part).join(', ') || 'nothing'}`);
        if (media) parts.push(media);
      }
    }
    const user = userMessage(parts);
    if (user) messages.push(user);
  }
  return messages;
}

function convertTools(
  request: GenerateContentRequest,
  untranslatable: Untranslatable,
): unknown[] | undefined {
  const tools: unknown[] = [];
  for (const [index, tool] of (request.tools ?? []).entries()) {
    const declarations = tool.functionDeclarations;
    const others = Object.keys(tool).filter((name) => name !== 'functionDeclarations');
    // Google's own tools (search, code execution, URL context…) run only at Google.
    if (others.length > 0) untranslatable.note(`tools[${index}]`, `a '${others[0]}' tool`);
    for (const declaration of declarations ?? []) {
      tools.push({
        type: 'function',
        function: {
          name: declaration.name,
          ...(declaration.description ? { description: declaration.description } : {}),
          parameters:
            declaration.parametersJsonSchema ??
            (declaration.parameters
              ? toJsonSchema(declaration.parameters)
              : { type: 'object', properties: {} }),
        },
      });
    }
  }
  return tools.length > 0 ? tools : undefined;
}

function convertToolChoice(request: GenerateContentRequest): unknown {
  const config = request.toolConfig?.functionCallingConfig;
  const mode = config?.mode?.toUpperCase();
  if (!mode || mode === 'AUTO' || mode === 'MODE_UNSPECIFIED' || mode === 'VALIDATED') return undefined;
  if (mode === 'NONE') return 'none';
  const names = config?.allowedFunctionNames ?? [];
  return names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
}

/** generationConfig members and the chat params they become. */
const GENERATION_PARAMS: Record<string, string> = {
  temperature: 'temperature',
  topP: 'top_p',
  maxOutputTokens: 'max_tokens',
  stopSequences: 'stop',
  seed: 'seed',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  candidateCount: 'n',
};

function convertGeneration(
  config: Record<string, unknown> | undefined,
  provider: string,
): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  if (!config) return params;
  for (const [from, to] of Object.entries(GENERATION_PARAMS))
    if (config[from] !== undefined) params[to] = config[from];
  if (
    config['topK'] !== undefined &&
    (provider === 'gemini' || provider === 'vertex' || provider === 'anthropic')
  ) {
    params['top_k'] = config['topK'];
  }
  const schema =
    config['responseJsonSchema'] ??
    (config['responseSchema'] ? toJsonSchema(config['responseSchema']) : undefined);
  if (schema) params['response_format'] = { type: 'json_schema', json_schema: { name: 'response', schema } };
  else if (config['responseMimeType'] === 'application/json')
    params['response_format'] = { type: 'json_object' };
  return params;
}

/**
 * A generate-content request as a chat completion, servable by any provider, beside the request as it came
 * for a provider of Gemini's format (thinking and safety settings, cached content, Google's own tools reach
 * only those). `native` is left out for a stream the caller reads as a JSON array (no `alt=sse`): the
 * provider's events are SSE.
 */
export function genAiToChat(options: {
  body: unknown;
  target: Target;
  stream: boolean;
  sse: boolean;
  /** Where the request is in the body, for the field an error names (`countTokens` may wrap it). */
  field?: string;
}): ParsedCompletion {
  const request = validate(generateContentSchema, options.body, options.field ?? '');
  const untranslatable = new Untranslatable();
  const params = convertGeneration(request.generationConfig, options.target.provider);
  const tools = convertTools(request, untranslatable);
  if (tools) {
    params['tools'] = tools;
    const choice = convertToolChoice(request);
    if (choice !== undefined) params['tool_choice'] = choice;
  }
  const record = options.body as Record<string, unknown>;
  if (record['cachedContent'] !== undefined) untranslatable.note('cachedContent', 'cached content');
  const messages = convertContents(request, untranslatable);
  const relayable = !options.stream || options.sse;
  if (!relayable && untranslatable.first) {
    throw invalidRequest(untranslatable.first.message, untranslatable.first.param);
  }
  return {
    operation: 'chat',
    target: options.target,
    fallbacks: [],
    messages,
    params,
    stream: options.stream,
    native: relayable
      ? { format: 'gemini', body: record, headers: {}, untranslatable: untranslatable.first }
      : undefined,
  };
}
