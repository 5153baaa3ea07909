import { GatewayError } from '@gw/shared';
import {
  queueFull,
  type ToolExecutor,
  type ToolJob,
  type ToolJobFailure,
  type ToolResult,
} from './mcp-runner-service.ts';
import {
  processToolJob,
  TOOL_JOB_ATTEMPTS,
  TOOL_JOB_BACKOFF_MS,
  type ToolJobRunner,
} from './process-tool-job.ts';

export interface InProcessToolQueueOptions {
  runner: ToolJobRunner;
  /** Jobs run at once (the embedded counterpart of a worker's concurrency). */
  concurrency: number;
  /** Waiting jobs past which execute() refuses with 429 queue_full. */
  maxQueued: number;
  attempts?: number;
  backoffMs?: number;
}

interface Item {
  job: ToolJob;
  attempt: number;
  resolve: (result: ToolResult) => void;
  reject: (error: GatewayError) => void;
}

/**
 * Embedded mode's tool queue: the BullMQ worker's semantics without Redis. The same processor runs each job;
 * a bounded number run at once, the rest wait (up to `maxQueued`); transport failures are retried with
 * exponential backoff (a retry waits outside the queue, as a delayed BullMQ job does); every other failure is
 * final. The processor bounds each run (the job's `notAfter` and the tool timeout), so every call settles.
 */
export class InProcessToolQueue implements ToolExecutor {
  private readonly options: Required<InProcessToolQueueOptions>;
  private readonly waiting: Item[] = [];
  private readonly delayed = new Map<NodeJS.Timeout, Item>();
  private active = 0;
  private closed = false;

  constructor(options: InProcessToolQueueOptions) {
    this.options = { attempts: TOOL_JOB_ATTEMPTS, backoffMs: TOOL_JOB_BACKOFF_MS, ...options };
  }

  execute(job: ToolJob): Promise<ToolResult> {
    if (this.closed) return Promise.reject(stopped());
    if (this.waiting.length >= this.options.maxQueued)
      return Promise.reject(queueFull(this.options.maxQueued));
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, attempt: 0, resolve, reject });
      this.pump();
    });
  }

  /** Jobs waiting for a slot (not counting delayed retries). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, item] of this.delayed) {
      clearTimeout(timer);
      item.reject(stopped());
    }
    this.delayed.clear();
    for (const item of this.waiting.splice(0)) item.reject(stopped());
  }

  private pump(): void {
    while (!this.closed && this.active < this.options.concurrency && this.waiting.length > 0) {
      const item = this.waiting.shift()!;
      this.active += 1;
      processToolJob(this.options.runner, item.job)
        .then(item.resolve, (failure: ToolJobFailure) => this.failed(item, failure))
        .finally(() => {
          this.active -= 1;
          this.pump();
        });
    }
  }

  private failed(item: Item, failure: ToolJobFailure): void {
    item.attempt += 1;
    if (!failure.retryable || item.attempt >= this.options.attempts || this.closed) {
      item.reject(failure.error);
      return;
    }
    const timer = setTimeout(
      () => {
        this.delayed.delete(timer);
        this.waiting.push(item);
        this.pump();
      },
      this.options.backoffMs * 2 ** (item.attempt - 1),
    );
    this.delayed.set(timer, item);
  }
}

function stopped(): GatewayError {
  return new GatewayError({
    type: 'service_unavailable',
    message: 'the MCP tool queue is stopping',
  });
}
