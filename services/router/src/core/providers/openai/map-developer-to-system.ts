import type { Message } from '@gw/shared';

/**
 * OpenAI's `developer` role is its newer name for `system`; compatible servers that predate it reject it or
 * feed it to the chat template as an unknown role.
 */
export function mapDeveloperToSystem(messages: readonly Message[]): Message[] {
  return messages.map((message) => (message.role === 'developer' ? { ...message, role: 'system' } : message));
}
