import { createHash } from 'node:crypto';
import type { Message } from '@gw/shared';

const MISTRAL_TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;

/**
 * Mistral accepts only tool call ids of nine letters and digits (its own format). Other ids (OpenAI's
 * `call_…`) are mapped to one derived from them, the same in the assistant's call and the tool's answer,
 * so a conversation started elsewhere still links up.
 */
export function toMistralToolCallId(id: string): string {
  if (MISTRAL_TOOL_CALL_ID.test(id)) return id;
  return createHash('sha256')
    .update(id)
    .digest('base64')
    .replace(/[^a-zA-Z0-9]/g, '')
    .slice(0, 9);
}

/**
 * Mistral validates messages strictly (unknown fields are a 422), so each message is rebuilt from the
 * fields Mistral knows: no `name` on system and user messages, no `developer` role.
 */
export function convertToMistralMessages(messages: readonly Message[]): Record<string, unknown>[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: message.content ?? '' };
      case 'user':
        return { role: 'user', content: message.content ?? '' };
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content ?? null,
          ...(message.tool_calls?.length
            ? {
                tool_calls: message.tool_calls.map((call) => ({
                  id: toMistralToolCallId(call.id),
                  type: 'function',
                  function: { name: call.function.name, arguments: call.function.arguments },
                })),
              }
            : {}),
          ...(message['prefix'] === true ? { prefix: true } : {}),
        };
      default:
        // `tool`, and the legacy `function` role that tool replaced.
        return {
          role: 'tool',
          content: message.content ?? '',
          ...(message.tool_call_id ? { tool_call_id: toMistralToolCallId(message.tool_call_id) } : {}),
          ...(message.name ? { name: message.name } : {}),
        };
    }
  });
}
