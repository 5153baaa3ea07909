import type { ChatChoice, ChatCompletionChunk } from '@gw/shared';
import type { AdapterResult } from '../adapter.ts';

/**
 * Converse has no structured output, so a `response_format` is served as LiteLLM and Bifrost serve it: a tool
 * whose input schema is the response schema, forced by `toolChoice`, whose input comes back as the message's
 * JSON content (not as a tool call).
 */
export const ANSWER_TOOL = 'json_tool_call';

/** The answer tool's toolSpec for a `response_format`, or none for text (a schemaless `json_object` takes any object). */
export function answerToolSpec(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const format = params['response_format'] as
    | { type?: unknown; json_schema?: { name?: unknown; description?: unknown; schema?: unknown } }
    | undefined;
  if (format?.type === 'json_object') {
    return {
      name: ANSWER_TOOL,
      description: 'Answer with a JSON object.',
      inputSchema: { json: { type: 'object' } },
    };
  }
  if (format?.type !== 'json_schema') return undefined;
  const { json_schema: described } = format;
  const schema =
    typeof described?.schema === 'object' && described.schema !== null
      ? described.schema
      : { type: 'object' };
  const description = typeof described?.description === 'string' ? described.description : undefined;
  const name = typeof described?.name === 'string' ? ` '${described.name}'` : '';
  return {
    name: ANSWER_TOOL,
    description: description ?? `Answer with the JSON object${name} its input schema describes.`,
    inputSchema: { json: schema },
  };
}

/** A whole answer whose call of the answer tool becomes the message's content. */
export function structuredAnswer(result: AdapterResult<ChatChoice>): AdapterResult<ChatChoice> {
  const [choice] = result.choices;
  const call = choice?.message.tool_calls?.find((toolCall) => toolCall.function.name === ANSWER_TOOL);
  if (!choice || !call) return result;
  const others = choice.message.tool_calls!.filter((toolCall) => toolCall !== call);
  const message: ChatChoice['message'] = { ...choice.message, content: call.function.arguments };
  if (others.length > 0) message.tool_calls = others;
  else delete message.tool_calls;
  const finish = others.length === 0 && choice.finish_reason === 'tool_calls' ? 'stop' : choice.finish_reason;
  return { ...result, choices: [{ ...choice, message, finish_reason: finish }] };
}

/** A stream whose answer tool's input deltas become content deltas (its opening chunk dropped). */
export async function* structuredAnswerStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
): AsyncGenerator<ChatCompletionChunk> {
  let answerIndex: number | undefined;
  let otherCalls = false;
  for await (const chunk of chunks) {
    const choice = chunk.choices[0];
    const calls = choice?.delta?.tool_calls;
    if (!choice || !calls) {
      if (choice?.finish_reason === 'tool_calls' && answerIndex !== undefined && !otherCalls) {
        yield { ...chunk, choices: [{ ...choice, finish_reason: 'stop' }] };
      } else yield chunk;
      continue;
    }
    const [call] = calls;
    if (call?.function?.name === ANSWER_TOOL) {
      answerIndex = call.index;
      continue;
    }
    if (call && call.index === answerIndex) {
      if (call.function?.arguments) {
        yield { ...chunk, choices: [{ ...choice, delta: { content: call.function.arguments } }] };
      }
      continue;
    }
    otherCalls = true;
    yield chunk;
  }
}
