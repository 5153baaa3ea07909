import { STREAM_WINDOW } from './lane-wire.ts';

/** How a streaming call on a lane ended: done, refused unrun (the replica drains), or failed. */
export type StreamEnd = { done: true } | { refused: true } | { error: unknown };
/** How a call on a lane ended: its answer, or as a streaming call can end. */
export type CallEnd<Answer> = { answer: Answer } | StreamEnd;
/** What a streaming call's reader gets next: a chunk, or how the call ended. */
export type StreamStep<Chunk> = { chunk: Chunk } | StreamEnd;

/**
 * The reader's side of a streaming call on a lane: chunks queue here (at most the window granted) until taken;
 * taking them grants the server more.
 */
export class ChunkQueue<Chunk> {
  private readonly queue: Chunk[] = [];
  private ended: StreamEnd | undefined;
  private wake: (() => void) | undefined;
  private taken = 0;
  private readonly grant: (credit: number) => void;

  constructor(grant: (credit: number) => void) {
    this.grant = grant;
  }

  push(chunk: Chunk): void {
    this.queue.push(chunk);
    this.wake?.();
  }

  end(how: StreamEnd): void {
    this.ended ??= how;
    this.wake?.();
  }

  /** The next chunk, or how the call ended once every chunk before that was taken. */
  async next(): Promise<StreamStep<Chunk>> {
    while (this.queue.length === 0 && this.ended === undefined) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    if (this.queue.length === 0) return this.ended!;
    const chunk = this.queue.shift()!;
    if (this.ended === undefined && ++this.taken >= STREAM_WINDOW / 2) {
      this.grant(this.taken);
      this.taken = 0;
    }
    return { chunk };
  }
}

/** A streaming call on a lane, as its reader sees it. */
export interface LaneStream<Chunk> {
  /** The next chunk, or how the call ended. */
  next(): Promise<StreamStep<Chunk>>;
  /** Stops the call early: the server is told, as for an abandoned call. */
  cancel(): void;
}
