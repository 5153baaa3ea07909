import type { ChatChoice, ToolCall } from '@gw/shared';
import type { AdapterResult } from '../adapter.ts';
import { type AnthropicMessage, isTextBlock, isToolUseBlock } from './anthropic-schemas.ts';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';
import { mapAnthropicUsage } from './map-anthropic-usage.ts';

/** An Anthropic message as one OpenAI chat choice: text blocks joined, tool_use blocks as tool calls. */
export function mapAnthropicResponse(
  message: AnthropicMessage,
  options: { raw: unknown; model: string },
): AdapterResult<ChatChoice> {
  const text = message.content.filter(isTextBlock).map((block) => block.text);
  const toolCalls: ToolCall[] = message.content.filter(isToolUseBlock).map((block) => ({
    id: block.id,
    type: 'function',
    function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
  }));
  const choice: ChatChoice = {
    index: 0,
    message: { role: 'assistant', content: text.length > 0 ? text.join('') : null },
    finish_reason: mapAnthropicFinishReason(message.stop_reason),
  };
  if (toolCalls.length > 0) choice.message.tool_calls = toolCalls;
  // Thinking in chat terms (`reasoning_content`, as vLLM and DeepSeek name it): a Responses caller gets it as a
  // reasoning item's summary; its signature stays Anthropic's (a caller of Anthropic's format gets it verbatim).
  const thinking = message.content
    .filter((block) => block.type === 'thinking' && typeof block['thinking'] === 'string')
    .map((block) => String(block['thinking']));
  if (thinking.length > 0) choice.message['reasoning_content'] = thinking.join('\n');
  return {
    id: message.id,
    // Anthropic's answers carry no timestamp.
    created: Math.floor(Date.now() / 1000),
    model: message.model || options.model,
    choices: [choice],
    usage: mapAnthropicUsage(message.usage),
    raw: options.raw,
  };
}
