import { answerAsChunks, answerAsResponse, type CacheHit, MAX_STORED_CHUNKS } from '@gw/cache';
import type { CompletionResult, StreamItem } from '@gw/router';
import { type ChatCompletionChunk, type CompletionResponse, EMPTY_USAGE } from '@gw/shared';

/** What `extra_fields.cache` says of a request: hit or miss, and on a hit its type, similarity and entry. */
export type CacheReport =
  | { status: 'miss' }
  | { status: 'hit'; type: CacheHit['hit']; similarity: number; entry_id: string };

function reportOf(hit: CacheHit): CacheReport {
  return {
    status: 'hit',
    type: hit.hit,
    similarity: Math.round(hit.similarity * 10_000) / 10_000,
    entry_id: hit.entry.id,
  };
}

/**
 * A hit as a whole answer. Its usage is zero: no provider was called, so nothing is charged or counted for
 * it (the embedding of a semantic lookup is charged as a side call). `latency` is the lookup's.
 */
export function hitAsResult(hit: CacheHit, latencySeconds: number): CompletionResult {
  const response = answerAsResponse(hit.entry.answer, hit.entry.provider);
  return {
    provider: hit.entry.provider,
    response: {
      ...response,
      usage: EMPTY_USAGE,
      extra_fields: { ...response.extra_fields, latency: latencySeconds, cache: reportOf(hit) },
    },
  };
}

/** A miss's whole answer with `extra_fields.cache`; the transport's JSON text no longer matches it. */
export function withReport(result: CompletionResult, report: CacheReport): CompletionResult {
  const { response } = result;
  return {
    ...result,
    json: undefined,
    response: { ...response, extra_fields: { ...response.extra_fields, cache: report } },
  };
}

/**
 * A hit replayed chunk by chunk, as the caller's surface frames any stream. Usage is zero (nothing was
 * charged), on the chunks that carried it, or on the last one when none did, so settlement never estimates
 * a replay from its length.
 */
export async function* hitAsStream(hit: CacheHit): AsyncIterable<StreamItem> {
  const chunks = answerAsChunks(hit.entry.answer);
  const carriesUsage = chunks.some((chunk) => chunk.usage);
  const last = chunks.length - 1;
  for (const [index, stored] of chunks.entries()) {
    let chunk: ChatCompletionChunk = stored;
    if (chunk.usage || (!carriesUsage && index === last)) chunk = { ...chunk, usage: EMPTY_USAGE };
    if (index === 0) {
      chunk = { ...chunk, extra_fields: { ...chunk.extra_fields, cache: reportOf(hit) } };
      yield { chunk, provider: hit.entry.provider };
    } else yield { chunk };
  }
}

/** A whole answer as stored: without `raw_response` (an earlier call's body is no answer to a later one). */
export function storableResponse(response: CompletionResponse): CompletionResponse {
  if (response.extra_fields.raw_response === undefined) return response;
  const { raw_response: _dropped, ...extraFields } = response.extra_fields;
  return { ...response, extra_fields: extraFields };
}

/**
 * A miss's stream, passed on item by item as it arrives (nothing is held back), with the report on its first
 * chunk. Its chunks are collected on the way; `complete` gets them once the stream ended normally. A stream
 * that fails, is abandoned by its reader or outgrows what an entry holds is never stored.
 */
export function collectingStream(
  items: AsyncIterable<StreamItem>,
  options: { report: CacheReport; complete(chunks: ChatCompletionChunk[], provider: string): void },
): AsyncIterable<StreamItem> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<StreamItem> {
      const inner = items[Symbol.asyncIterator]();
      let chunks: ChatCompletionChunk[] | undefined = [];
      let provider = '';
      let first = true;
      return {
        async next() {
          const result = await inner.next();
          if (result.done) {
            if (chunks !== undefined && chunks.length > 0) options.complete(chunks, provider);
            chunks = undefined;
            return result;
          }
          const item = result.value;
          if (item.provider) provider = item.provider;
          if (chunks !== undefined) {
            if (chunks.length < MAX_STORED_CHUNKS) chunks.push(item.chunk);
            else chunks = undefined;
          }
          if (!first) return result;
          first = false;
          const chunk = {
            ...item.chunk,
            extra_fields: { ...item.chunk.extra_fields, cache: options.report },
          };
          return { done: false, value: { ...item, chunk, json: undefined } };
        },
        async return(value?: unknown) {
          chunks = undefined;
          const result = await inner.return?.(value);
          return result ?? { done: true, value: undefined };
        },
      };
    },
  };
}
