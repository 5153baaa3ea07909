import type { LogRecord } from './log-record.ts';

/** Records as they are written, for the live tail (`/api/logs/stream`). */
export interface LogTail {
  /** Calls the listener with each batch written from now on; answers the function that stops it. */
  subscribe(listener: (records: readonly LogRecord[]) => void): () => void;
}

/**
 * The embedded live tail: the writer tells it each batch it wrote (`LogWriter` `onWritten`), and it hands the
 * batch to every subscriber. With no subscriber a batch costs one Set size check.
 */
export class LogTailHub implements LogTail {
  readonly #listeners = new Set<(records: readonly LogRecord[]) => void>();

  publish(records: readonly LogRecord[]): void {
    for (const listener of this.#listeners) listener(records);
  }

  subscribe(listener: (records: readonly LogRecord[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
