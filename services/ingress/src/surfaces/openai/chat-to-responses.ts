import type { ChatChoice, CompletionResponse, FinishReason, Usage } from '@gw/shared';
import type { ResponsesRequest } from './responses-to-chat.ts';

/** The request members a Response object echoes back. */
export type ResponseEcho = Pick<
  ResponsesRequest,
  | 'instructions'
  | 'max_output_tokens'
  | 'temperature'
  | 'top_p'
  | 'tools'
  | 'tool_choice'
  | 'parallel_tool_calls'
>;

export function responsesUsage(usage: Usage | undefined) {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: Number(usage?.prompt_tokens_details?.['cache_write_tokens'] ?? 0),
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage?.total_tokens ?? input + output,
  };
}

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed') {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: status === 'completed' ? [outputText(text)] : [],
  };
}

export function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(
  id: string,
  call: { id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
) {
  return { type: 'function_call', id, call_id: call.id, name: call.name, arguments: call.arguments, status };
}

/** The Response object's envelope; `output` and `usage` are filled once the answer is known. */
export function responseObject(options: {
  id: string;
  createdAt: number;
  model: string;
  echo: ResponseEcho;
  status: 'in_progress' | 'completed' | 'incomplete';
  output: unknown[];
  usage: ReturnType<typeof responsesUsage> | null;
}) {
  const { echo } = options;
  return {
    id: options.id,
    object: 'response',
    created_at: options.createdAt,
    status: options.status,
    background: false,
    error: null,
    incomplete_details: options.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    model: options.model,
    output: options.output,
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: echo.temperature ?? null,
    text: { format: { type: 'text' } },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: (echo.tools ?? []).map(echoedTool),
    top_p: echo.top_p ?? null,
    truncation: 'disabled',
    usage: options.usage,
    metadata: {},
  };
}

/**
 * A function tool as a Response object echoes it: OpenAI's schema requires `strict` and `parameters` (null when
 * the caller sent none); only function tools reach here (OpenAI's own tools are refused for other providers).
 */
function echoedTool(tool: NonNullable<ResponseEcho['tools']>[number]) {
  return { ...tool, parameters: tool.parameters ?? null, strict: tool.strict ?? false };
}

export function responseStatus(finish: FinishReason): 'completed' | 'incomplete' {
  return finish === 'length' ? 'incomplete' : 'completed';
}

/** A chat answer as a Response object: the text as one message item, each tool call as a function_call item. */
export function chatToResponses(completion: CompletionResponse, echo: ResponseEcho, requestId: string) {
  const choice = completion.choices[0] as ChatChoice | undefined;
  const output: unknown[] = [];
  // A provider's thinking (`reasoning_content`, Anthropic's or Gemini's in chat terms) as a reasoning item.
  const reasoning = choice?.message['reasoning_content'];
  if (typeof reasoning === 'string' && reasoning) {
    output.push({
      type: 'reasoning',
      id: `rs_${requestId}`,
      summary: [{ type: 'summary_text', text: reasoning }],
    });
  }
  const text = choice?.message.content;
  if (text) output.push(messageItem(`msg_${requestId}`, text, 'completed'));
  for (const [index, call] of (choice?.message.tool_calls ?? []).entries()) {
    output.push(
      functionCallItem(
        `fc_${requestId}_${index}`,
        { id: call.id, name: call.function.name, arguments: call.function.arguments },
        'completed',
      ),
    );
  }
  return responseObject({
    id: `resp_${requestId}`,
    createdAt: completion.created,
    model: completion.model,
    echo,
    status: responseStatus(choice?.finish_reason ?? 'stop'),
    output,
    usage: responsesUsage(completion.usage),
  });
}
