import type { FinishReason } from '@gw/shared';

/**
 * OpenAI's finish reasons, plus the spellings OpenAI-compatible servers use for the same thing (the legacy
 * `function_call`, mistral's `model_length`). Anything else unknown still ended the answer: `stop`.
 */
export function mapOpenAiFinishReason(value: string | null | undefined): FinishReason {
  switch (value) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return value;
    case 'function_call':
      return 'tool_calls';
    case 'model_length':
      return 'length';
    case null:
    case undefined:
    case '':
      return null;
    default:
      return 'stop';
  }
}
