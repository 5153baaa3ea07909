import type { Tool } from '@gw/shared';
import type { ChatInput } from '../adapter.ts';
import { reasoningBudget } from '../reasoning-budget.ts';
import { convertJsonSchemaToGeminiSchema } from './convert-json-schema-to-gemini-schema.ts';
import { convertToGeminiMessages } from './convert-to-gemini-messages.ts';

/** Extra params that are members of Gemini's `generationConfig` (given in snake_case or camelCase). */
const GENERATION_CONFIG_FIELDS = new Set([
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'responseModalities',
  'speechConfig',
  'mediaResolution',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
]);

/** Extra params that are top-level members of a Gemini request body. */
const BODY_FIELDS = new Set(['safetySettings', 'cachedContent', 'labels']);

/** Params translated by name below; everything else is an extra. */
const TRANSLATED = new Set([
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop_sequences',
  'stop',
  'tools',
  'tool_choice',
  'response_format',
  'seed',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'generation_config',
  'generationConfig',
  'reasoning_effort',
]);

/** OpenAI's `reasoning_effort` as Gemini's thinking budget (a caller's own `thinkingConfig` wins). */
function thinkingConfig(params: Record<string, unknown>): Record<string, unknown> {
  const budget = reasoningBudget(params);
  return budget === undefined ? {} : { thinkingConfig: { thinkingBudget: budget } };
}

/** Gemini 3 and later models require thought signatures on replayed function calls. */
function requiresThoughtSignatures(model: string): boolean {
  const major = /^(?:models\/)?gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

function camelCase(name: string): string {
  return name.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function stopSequences(params: Record<string, unknown>): string[] | undefined {
  const stop = params['stop_sequences'] ?? params['stop'];
  if (typeof stop === 'string') return [stop];
  return Array.isArray(stop) ? (stop as string[]) : undefined;
}

function responseFormat(format: unknown): Record<string, unknown> {
  if (typeof format !== 'object' || format === null) return {};
  const { type, json_schema: jsonSchema } = format as { type?: string; json_schema?: { schema?: unknown } };
  if (type === 'json_object') return { responseMimeType: 'application/json' };
  if (type !== 'json_schema') return {};
  const schema = convertJsonSchemaToGeminiSchema(jsonSchema?.schema);
  return { responseMimeType: 'application/json', ...(schema ? { responseSchema: schema } : {}) };
}

function functionDeclaration(tool: Tool): Record<string, unknown> {
  const { name, description, parameters } = tool.function;
  const schema = convertJsonSchemaToGeminiSchema(parameters);
  // Gemini rejects an object schema without properties; a function without arguments has no schema at all.
  const hasArguments = schema && Object.keys((schema['properties'] as object | undefined) ?? {}).length > 0;
  return { name, ...(description ? { description } : {}), ...(hasArguments ? { parameters: schema } : {}) };
}

function toolConfig(choice: unknown): Record<string, unknown> | undefined {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const name = (choice as { function?: { name?: string } } | undefined)?.function?.name;
  return name ? { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } } : undefined;
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/**
 * A normalised chat request as a Gemini GenerateContentRequest (without the model, which is in the URL).
 * Gemini answers 400 to members it does not know, so extra params pass through only when they name a
 * Gemini field; others are dropped.
 */
export function convertToGeminiRequest(input: ChatInput): Record<string, unknown> {
  const { params } = input;
  const extraBody: Record<string, unknown> = {};
  const extraConfig: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (TRANSLATED.has(name)) continue;
    const field = camelCase(name);
    if (GENERATION_CONFIG_FIELDS.has(field)) extraConfig[field] = value;
    else if (BODY_FIELDS.has(field)) extraBody[field] = value;
  }
  const generationConfig = withoutUndefined({
    maxOutputTokens: params['max_completion_tokens'] ?? params['max_tokens'],
    temperature: params['temperature'],
    topP: params['top_p'],
    stopSequences: stopSequences(params),
    candidateCount: params['n'],
    seed: params['seed'],
    presencePenalty: params['presence_penalty'],
    frequencyPenalty: params['frequency_penalty'],
    responseLogprobs: params['logprobs'],
    logprobs: params['top_logprobs'],
    ...responseFormat(params['response_format']),
    ...thinkingConfig(params),
    ...extraConfig,
    ...((params['generation_config'] ?? params['generationConfig']) as Record<string, unknown> | undefined),
  });
  const tools = params['tools'] as Tool[] | undefined;
  return withoutUndefined({
    ...convertToGeminiMessages(input.messages, { signFunctionCalls: requiresThoughtSignatures(input.model) }),
    generationConfig: Object.keys(generationConfig).length > 0 ? generationConfig : undefined,
    tools: tools?.length ? [{ functionDeclarations: tools.map(functionDeclaration) }] : undefined,
    toolConfig: toolConfig(params['tool_choice']),
    ...extraBody,
  });
}
