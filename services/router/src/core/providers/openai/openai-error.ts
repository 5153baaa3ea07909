import type { ErrorMessageReader } from '../upstream-call.ts';

/** OpenAI (and compatible servers) answer `{ "error": { "message": … } }`, sometimes a bare string. */
export const readOpenAiErrorMessage: ErrorMessageReader = (body) => {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  const detail =
    (body as { detail?: unknown; message?: unknown }).detail ?? (body as { message?: unknown }).message;
  return typeof detail === 'string' ? detail : undefined;
};
