import { readOpenAiErrorMessage } from '../openai/openai-error.ts';
import type { ErrorMessageReader } from '../upstream-call.ts';

interface ValidationDetail {
  msg?: unknown;
  loc?: unknown;
}

/** `{ detail: [{ msg, loc }] }`, pydantic's validation report, as one line. */
function describeValidation(report: unknown): string | undefined {
  const detail =
    typeof report === 'object' && report !== null ? (report as { detail?: unknown }).detail : undefined;
  if (!Array.isArray(detail) || detail.length === 0) return undefined;
  return (detail as ValidationDetail[])
    .map((item) => {
      const where = Array.isArray(item.loc) ? item.loc.join('.') : undefined;
      return where ? `${String(item.msg)} (${where})` : String(item.msg);
    })
    .join('; ');
}

/**
 * Mistral answers `{ object: 'error', message, type }`; for a 422 `message` is a validation report
 * `{ detail: [{ msg, loc }] }`, sometimes as a JSON string, which is turned into one readable line.
 */
export const readMistralErrorMessage: ErrorMessageReader = (body) => {
  if (typeof body !== 'object' || body === null) return undefined;
  const message: unknown = (body as { message?: unknown }).message;
  if (typeof message === 'string') {
    if (!message.startsWith('{')) return message;
    return describeValidation(parseJson(message)) ?? message;
  }
  return describeValidation(message) ?? describeValidation(body) ?? readOpenAiErrorMessage(body);
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
