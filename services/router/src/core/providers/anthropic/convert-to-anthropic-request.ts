import { invalidRequest } from '@gw/shared';
import type { ChatInput } from '../adapter.ts';
import { reasoningBudget } from '../reasoning-budget.ts';
import {
  type AnthropicRequestBlock,
  type AnthropicRequestMessage,
  convertToAnthropicMessages,
} from './convert-to-anthropic-messages.ts';

/** Anthropic requires `max_tokens`; this is sent when the caller gave no limit. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * Body members of the Messages API that callers may pass as extra params. Anthropic rejects unknown members,
 * so everything else (OpenAI-only params such as seed, n) is dropped rather than forwarded; response_format
 * becomes `output_config.format`.
 */
const ANTHROPIC_EXTRA_PARAMS = [
  'top_k',
  'metadata',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
  'inference_geo',
  'cache_control',
] as const;

export interface AnthropicRequestBody extends Record<string, unknown> {
  model: string;
  max_tokens: number;
  system?: string | AnthropicRequestBlock[];
  messages: AnthropicRequestMessage[];
  stream?: boolean;
}

function stopSequences(params: Record<string, unknown>): string[] | undefined {
  const stop = params['stop_sequences'] ?? params['stop'];
  if (stop === undefined || stop === null) return undefined;
  return Array.isArray(stop) ? (stop as string[]) : [String(stop)];
}

/** OpenAI function tools as Anthropic tools; tools that are not functions are taken as Anthropic's own. */
function convertTools(tools: unknown): unknown[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return tools.map((tool: { type?: unknown; function?: Record<string, unknown> }) => {
    if (tool.type !== 'function' || !tool.function) return tool;
    const { name, description, parameters } = tool.function;
    return {
      name,
      ...(description === undefined ? {} : { description }),
      // Anthropic requires a schema; a function without parameters takes none.
      input_schema: parameters ?? { type: 'object', properties: {} },
    };
  });
}

function convertToolChoice(
  toolChoice: unknown,
  parallelToolCalls: unknown,
): Record<string, unknown> | undefined {
  let choice: Record<string, unknown> | undefined;
  if (toolChoice === 'auto') choice = { type: 'auto' };
  else if (toolChoice === 'required') choice = { type: 'any' };
  else if (toolChoice === 'none') choice = { type: 'none' };
  else if (typeof toolChoice === 'object' && toolChoice !== null) {
    const name = (toolChoice as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== 'string') throw invalidRequest('tool_choice names no function', 'tool_choice');
    choice = { type: 'tool', name };
  } else if (toolChoice !== undefined) throw invalidRequest('tool_choice is not valid', 'tool_choice');
  // OpenAI's parallel_tool_calls: false is Anthropic's disable_parallel_tool_use, which lives on tool_choice.
  if (parallelToolCalls === false && choice?.type !== 'none') {
    choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  }
  return choice;
}

function metadata(params: Record<string, unknown>): unknown {
  const given = params['metadata'];
  const user = params['user'];
  if (typeof user !== 'string' || !user) return given;
  // OpenAI's `user` is Anthropic's metadata.user_id.
  return { user_id: user, ...(typeof given === 'object' && given !== null ? given : {}) };
}

/**
 * OpenAI's `response_format` as Anthropic's structured output (`output_config.format`, beside any other
 * `output_config` the caller sent): a JSON schema is Anthropic's own; JSON mode without a schema has no
 * equivalent, so it is refused rather than answered with prose.
 */
function outputConfig(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const given = params['output_config'] as Record<string, unknown> | undefined;
  const format = params['response_format'] as
    | { type?: unknown; json_schema?: { schema?: unknown } }
    | undefined;
  if (!format || format.type === 'text') return given;
  if (format.type === 'json_schema' && typeof format.json_schema?.schema === 'object') {
    return { ...given, format: { type: 'json_schema', schema: format.json_schema.schema } };
  }
  throw invalidRequest(
    `response_format: '${String(format.type)}' has no Anthropic equivalent; send a json_schema`,
    'response_format',
  );
}

/** A normalised chat request as the body of `POST /v1/messages`. */
export function convertToAnthropicRequest(
  input: ChatInput,
  options: { stream: boolean },
): AnthropicRequestBody {
  const { params } = input;
  const { system, messages } = convertToAnthropicMessages(input.messages);
  const body: AnthropicRequestBody = {
    model: input.model,
    max_tokens: Number(params['max_tokens'] ?? params['max_completion_tokens'] ?? DEFAULT_MAX_TOKENS),
    messages,
  };
  if (system !== undefined) body.system = system;
  for (const name of ANTHROPIC_EXTRA_PARAMS) {
    if (params[name] !== undefined) body[name] = params[name];
  }
  const tools = convertTools(params['tools']);
  const optional: Record<string, unknown> = {
    temperature: params['temperature'],
    top_p: params['top_p'],
    stop_sequences: stopSequences(params),
    metadata: metadata(params),
    output_config: outputConfig(params),
    tools,
    // Anthropic rejects a tool_choice without tools, which OpenAI callers sometimes send.
    tool_choice: tools ? convertToolChoice(params['tool_choice'], params['parallel_tool_calls']) : undefined,
  };
  for (const [name, value] of Object.entries(optional)) {
    if (value !== undefined && value !== null) body[name] = value;
  }
  applyReasoningEffort(body, params);
  if (options.stream) body.stream = true;
  return body;
}

/**
 * OpenAI's `reasoning_effort` as Anthropic's extended thinking, unless the caller set `thinking` itself: a
 * budget of that many tokens, which Anthropic wants below `max_tokens` (raised by the budget when it is not).
 */
function applyReasoningEffort(body: AnthropicRequestBody, params: Record<string, unknown>): void {
  const budget = reasoningBudget(params);
  if (budget === undefined || budget === 0 || body['thinking'] !== undefined) return;
  body['thinking'] = { type: 'enabled', budget_tokens: budget };
  if (body.max_tokens <= budget) body.max_tokens += budget;
}
