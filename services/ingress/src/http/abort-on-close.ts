import type { ServerResponse } from 'node:http';

/** Aborts when the client goes away before the answer is complete (cancels the upstream call). */
export function abortOnClose(response: ServerResponse): AbortSignal {
  const abort = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) abort.abort();
  });
  return abort.signal;
}
