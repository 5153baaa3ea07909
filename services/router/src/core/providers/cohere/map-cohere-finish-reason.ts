import type { FinishReason } from '@gw/shared';

/**
 * Reasons with which Cohere ends a generation that failed: gw turns them into an upstream error instead of
 * passing off a broken answer as complete.
 */
const FAILURE_REASONS = new Set(['ERROR', 'TIMEOUT']);

export function isCohereFailure(reason: string | null | undefined): boolean {
  return reason != null && FAILURE_REASONS.has(reason);
}

/**
 * Cohere's `finish_reason` as OpenAI's. ERROR_TOXIC and ERROR_LIMIT are v1 names some deployments (OCI,
 * older models) still send; unknown reasons of a finished message count as `stop`.
 */
export function mapCohereFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
      return 'stop';
    case 'MAX_TOKENS':
    case 'ERROR_LIMIT':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR_TOXIC':
      return 'content_filter';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}
