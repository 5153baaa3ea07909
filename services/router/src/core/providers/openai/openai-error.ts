import { z } from 'zod';
import { errorMessageReader } from '../upstream-call.ts';

/**
 * OpenAI answers `{ "error": { "message": … } }`; compatible servers sometimes `{ "error": "…" }`, or a
 * FastAPI-style `{ "detail": "…" }` or `{ "message": "…" }`.
 */
export const readOpenAiErrorMessage = errorMessageReader(
  z.object({ error: z.string() }).transform((body) => body.error),
  z.object({ error: z.object({ message: z.string() }) }).transform((body) => body.error.message),
  z.object({ detail: z.string() }).transform((body) => body.detail),
  z.object({ detail: z.null().optional(), message: z.string() }).transform((body) => body.message),
);
