import type { FinishReason } from '@gw/shared';

/** Converse `stopReason` values as OpenAI finish reasons; unknown future reasons read as a plain stop. */
export function mapBedrockFinishReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    case undefined:
    case null:
      return null;
    default:
      return 'stop';
  }
}
