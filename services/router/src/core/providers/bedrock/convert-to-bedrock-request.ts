import { invalidRequest, type Message, type Tool } from '@gw/shared';
import { ANSWER_TOOL, answerToolSpec } from './bedrock-structured-output.ts';
import { convertToBedrockMessages } from './convert-to-bedrock-messages.ts';

/** Params that become `inferenceConfig` or `toolConfig`. */
const MAPPED_PARAMS = new Set([
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop_sequences',
  'stop',
  'tools',
  'tool_choice',
]);

/**
 * OpenAI params Converse has no place for. They are dropped rather than passed on, because any member of
 * `additionalModelRequestFields` the model does not know fails the whole request.
 */
const DROPPED_PARAMS = new Set([
  'response_format',
  'n',
  'seed',
  'user',
  'stream',
  'stream_options',
  'parallel_tool_calls',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'frequency_penalty',
  'presence_penalty',
  'service_tier',
  'store',
  'metadata',
]);

/** Top-level Converse fields a caller may send as params; they go into the body as they are. */
const CONVERSE_FIELDS = new Set([
  'guardrailConfig',
  'additionalModelResponseFieldPaths',
  'performanceConfig',
  'promptVariables',
  'requestMetadata',
]);

function stopSequences(params: Record<string, unknown>): string[] | undefined {
  const stop = params['stop_sequences'] ?? params['stop'];
  if (typeof stop === 'string') return [stop];
  return Array.isArray(stop) ? (stop as string[]) : undefined;
}

function inferenceConfig(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const config: Record<string, unknown> = {};
  const maxTokens = params['max_tokens'] ?? params['max_completion_tokens'];
  if (maxTokens !== undefined) config['maxTokens'] = maxTokens;
  if (params['temperature'] !== undefined) config['temperature'] = params['temperature'];
  if (params['top_p'] !== undefined) config['topP'] = params['top_p'];
  const stop = stopSequences(params);
  if (stop !== undefined) config['stopSequences'] = stop;
  return Object.keys(config).length > 0 ? config : undefined;
}

function toolChoice(choice: unknown): Record<string, unknown> | undefined {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  if (typeof choice === 'object' && choice !== null && 'function' in choice) {
    return { tool: { name: (choice as { function: { name: string } }).function.name } };
  }
  return undefined;
}

/**
 * Converse has no "none" tool choice: the tools are left out instead, so the model cannot call one. A
 * `response_format` adds the answer tool (bedrock-structured-output.ts), forced when it is the only tool, else
 * beside the caller's with a call of some tool required.
 */
function toolConfig(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const answer = answerToolSpec(params);
  const given = params['tool_choice'] === 'none' ? [] : ((params['tools'] as Tool[] | undefined) ?? []);
  if (answer) {
    const callers = callerToolSpecs(given);
    return {
      tools: [...callers, { toolSpec: answer }],
      toolChoice: callers.length > 0 ? { any: {} } : { tool: { name: ANSWER_TOOL } },
    };
  }
  if (given.length === 0) return undefined;
  const config: Record<string, unknown> = { tools: callerToolSpecs(given) };
  const choice = toolChoice(params['tool_choice']);
  if (choice) config['toolChoice'] = choice;
  return config;
}

function callerToolSpecs(tools: Tool[]): Array<Record<string, unknown>> {
  return tools.map((tool) => ({
    toolSpec: {
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
    },
  }));
}

/**
 * The Converse body of a chat request (the same for `converse` and `converse-stream`). Params gw does not
 * know go to `additionalModelRequestFields`, where model-specific settings (`top_k`, `thinking`…) belong.
 */
export function convertToBedrockRequest(input: {
  messages: readonly Message[];
  params: Record<string, unknown>;
}): Record<string, unknown> {
  const format = (input.params['response_format'] as { type?: unknown } | undefined)?.type;
  if (format !== undefined && !['text', 'json_object', 'json_schema'].includes(String(format))) {
    throw invalidRequest(`response_format: '${String(format)}' is not a response format`, 'response_format');
  }
  const { system, messages } = convertToBedrockMessages(input.messages);
  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body['system'] = system;
  const inference = inferenceConfig(input.params);
  if (inference) body['inferenceConfig'] = inference;
  const tools = toolConfig(input.params);
  if (tools) body['toolConfig'] = tools;

  const additional: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input.params)) {
    if (value === undefined || MAPPED_PARAMS.has(name) || DROPPED_PARAMS.has(name)) continue;
    if (CONVERSE_FIELDS.has(name)) body[name] = value;
    else if (name === 'additionalModelRequestFields' && typeof value === 'object' && value !== null) {
      Object.assign(additional, value);
    } else additional[name] = value;
  }
  if (Object.keys(additional).length > 0) body['additionalModelRequestFields'] = additional;
  return body;
}
