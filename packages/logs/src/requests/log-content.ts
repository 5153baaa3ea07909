import type { LogRecord } from './log-record.ts';

/** Whether content is kept, and how much of each of request and response. */
export interface ContentPolicy {
  keep: boolean;
  maxBytes: number;
}

const encoder = new TextEncoder();

/**
 * The longest prefix of the text that fits in maxBytes of UTF-8, never cutting a character in two (so the
 * stored text is valid UTF-8 and a byte limit of the column is kept). The text itself when it fits.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  // A UTF-16 unit never takes more than 3 bytes of UTF-8, so short texts need no encoding at all.
  if (text.length * 3 <= maxBytes) return text;
  // encodeInto stops at the last whole character that fits, and reads no further than it writes.
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return read === text.length ? text : text.slice(0, read);
}

/** Applies the policy to a record the writer owns: content removed, or cut to size and marked. */
export function applyContentPolicy(record: LogRecord, policy: ContentPolicy): void {
  if (!policy.keep) {
    record.request_content = null;
    record.response_content = null;
    return;
  }
  for (const field of ['request_content', 'response_content'] as const) {
    const text = record[field];
    if (text === null) continue;
    const kept = truncateUtf8(text, policy.maxBytes);
    if (kept !== text) {
      record[field] = kept;
      record.content_truncated = true;
    }
  }
}
