import type { FinishReason } from '@gw/shared';

/**
 * Anthropic's `stop_reason` as OpenAI's `finish_reason`. `pause_turn` (a server tool paused a long turn) and
 * reasons added later end the turn normally; a missing reason stays null.
 */
export function mapAnthropicFinishReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case undefined:
    case null:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
