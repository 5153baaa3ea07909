import type { FinishReason } from '@gw/shared';

/** Reasons Google gives when it withheld or cut an answer for policy reasons. */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/**
 * Gemini's finishReason as OpenAI's. Gemini says STOP after a function call too, so whether the candidate
 * called a function decides between `stop` and `tool_calls`.
 */
export function mapGeminiFinishReason(reason: string | undefined, calledFunction: boolean): FinishReason {
  if (!reason) return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledFunction ? 'tool_calls' : 'stop';
}
