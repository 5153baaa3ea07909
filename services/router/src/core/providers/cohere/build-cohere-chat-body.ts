import { GatewayError, type Tool } from '@gw/shared';
import type { ChatInput } from '../adapter.ts';
import { convertToCohereMessages } from './convert-to-cohere-messages.ts';
import { prepareCohereTools } from './prepare-cohere-tools.ts';

/** OpenAI params that mean nothing to Cohere; sent along they would only earn a 400. */
const OPENAI_ONLY_PARAMS = [
  'user',
  'stream',
  'stream_options',
  'parallel_tool_calls',
  'logit_bias',
  'top_logprobs',
  'service_tier',
  'store',
  'metadata',
] as const;

/** OpenAI's response_format as Cohere's: a JSON schema rides inside `json_object`. */
function convertResponseFormat(format: unknown): unknown {
  if (typeof format !== 'object' || format === null) return format;
  const { type } = format as { type?: unknown };
  if (type !== 'json_schema') return format;
  const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
  return schema === undefined ? { type: 'json_object' } : { type: 'json_object', json_schema: schema };
}

function stopSequences(params: Record<string, unknown>): unknown {
  const stop = params['stop_sequences'] ?? params['stop'];
  return typeof stop === 'string' ? [stop] : stop;
}

/** The body of `POST /v2/chat` for a normalised chat request; unknown params pass through. */
export function buildCohereChatBody(input: ChatInput): Record<string, unknown> {
  const {
    max_tokens,
    max_completion_tokens,
    top_p,
    top_k,
    stop,
    stop_sequences,
    tools,
    tool_choice,
    response_format,
    n,
    ...rest
  } = input.params;
  // Cohere answers one choice; quietly answering one where several were asked for would be a lie.
  if (typeof n === 'number' && n > 1) {
    throw new GatewayError({
      type: 'invalid_request',
      message: 'cohere answers a single choice; n must be 1',
      param: 'n',
    });
  }
  const passThrough: Record<string, unknown> = { ...rest };
  for (const name of OPENAI_ONLY_PARAMS) delete passThrough[name];

  const body: Record<string, unknown> = {
    ...passThrough,
    ...prepareCohereTools(
      tools as Tool[] | undefined,
      tool_choice as Parameters<typeof prepareCohereTools>[1],
    ),
    model: input.model,
    messages: convertToCohereMessages(input.messages),
  };
  const maxTokens = max_tokens ?? max_completion_tokens;
  if (maxTokens !== undefined) body['max_tokens'] = maxTokens;
  if (top_p !== undefined) body['p'] = top_p;
  if (top_k !== undefined) body['k'] = top_k;
  const sequences = stopSequences({ stop, stop_sequences });
  if (sequences !== undefined) body['stop_sequences'] = sequences;
  if (response_format !== undefined) body['response_format'] = convertResponseFormat(response_format);
  return body;
}
