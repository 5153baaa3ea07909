import type { ChatChoice, ToolCall } from '@gw/shared';
import type { AdapterResult } from '../adapter.ts';
import type { BedrockConverseResponse } from './bedrock-schemas.ts';
import { mapBedrockFinishReason } from './map-bedrock-finish-reason.ts';
import { mapBedrockUsage } from './map-bedrock-usage.ts';

/**
 * A Converse answer as a normalised chat result: text blocks join into the content, toolUse blocks become
 * tool calls with their input as a JSON string. Bedrock names no completion id, so the caller makes one.
 */
export function mapBedrockResponse(
  response: BedrockConverseResponse,
  options: { raw: unknown; model: string; id: string },
): AdapterResult<ChatChoice> {
  const blocks = response.output.message?.content ?? [];
  const text = blocks.flatMap((block) => (block.text !== undefined ? [block.text] : [])).join('');
  const toolCalls: ToolCall[] = blocks.flatMap((block) =>
    block.toolUse
      ? [
          {
            id: block.toolUse.toolUseId,
            type: 'function' as const,
            function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) },
          },
        ]
      : [],
  );
  const message: ChatChoice['message'] = { role: 'assistant', content: text || null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: options.id,
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    choices: [{ index: 0, message, finish_reason: mapBedrockFinishReason(response.stopReason) ?? 'stop' }],
    usage: mapBedrockUsage(response.usage),
    raw: options.raw,
  };
}
