import { decodeGatewayError, GatewayError } from '@gw/shared';
import type { RedisConnection } from '@gw/shared/store';
import { Queue, QueueEvents } from 'bullmq';
import {
  queueFull,
  type ToolExecutor,
  type ToolJob,
  type ToolResult,
  toolResultSchema,
} from '../core/mcp-runner-service.ts';
import { TOOL_JOB_ATTEMPTS, TOOL_JOB_BACKOFF_MS } from '../core/process-tool-job.ts';
import { bullConnection, bullPrefix, TOOL_QUEUE } from './tool-queue-connection.ts';

export interface BullToolQueueOptions {
  redisUrl: string;
  redisPrefix: string;
  /** Waiting jobs past which a call is refused with 429 queue_full. */
  maxQueued: number;
  /** The runners' per-call timeout: a caller waits for the queue time left to the job, then this, then gives up. */
  toolTimeoutMs: number;
}

/** How long a read of the waiting count stands in for Redis's (saves a round trip per call under load). */
const COUNT_TTL_MS = 50;

/**
 * The cluster's ToolExecutor (ingress): adds a job to the runners' queue and waits for its result through
 * QueueEvents. The bound on waiting jobs is checked before adding against a count at most 50 ms old: it is
 * approximate (a burst within 50 ms, or several ingress replicas, may overshoot it a little).
 */
export class BullToolQueue implements ToolExecutor {
  private readonly options: BullToolQueueOptions;
  private readonly connection: RedisConnection;
  private readonly eventsConnection: RedisConnection;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  /** The waiting count, read from Redis at most every COUNT_TTL_MS. */
  private counted = { value: 0, atMs: Number.NEGATIVE_INFINITY };

  private constructor(
    options: BullToolQueueOptions,
    connection: RedisConnection,
    queue: Queue,
    lastEventId: string,
  ) {
    this.options = options;
    this.connection = connection;
    this.queue = queue;
    this.eventsConnection = bullConnection(options.redisUrl);
    this.events = new QueueEvents(TOOL_QUEUE, {
      connection: this.eventsConnection,
      prefix: bullPrefix(options.redisPrefix),
      autorun: false,
      lastEventId,
    });
    this.events.setMaxListeners(0);
    this.events.run().catch((error) => this.events.emit('error', error));
  }

  /**
   * The event reader starts after the stream's last event at open, not at `$` (BullMQ's default, resolved by
   * Redis when its first XREAD arrives): a job finished between open and that first read (a round trip or two
   * later, more on Redis Cluster) would otherwise never be reported, and its caller would wait out the timeout.
   */
  static async open(options: BullToolQueueOptions): Promise<BullToolQueue> {
    const connection = bullConnection(options.redisUrl);
    const queue = new Queue(TOOL_QUEUE, { connection, prefix: bullPrefix(options.redisPrefix) });
    await queue.waitUntilReady();
    const [last] = await connection.xrevrange(queue.keys['events']!, '+', '-', 'COUNT', 1);
    const opened = new BullToolQueue(options, connection, queue, last?.[0] ?? '0-0');
    await opened.events.waitUntilReady();
    return opened;
  }

  async execute(job: ToolJob): Promise<ToolResult> {
    if ((await this.waitingCount()) >= this.options.maxQueued) throw queueFull(this.options.maxQueued);
    const added = await this.queue.add('call', job, {
      attempts: TOOL_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: TOOL_JOB_BACKOFF_MS },
      removeOnComplete: { age: 60, count: 1_000 },
      removeOnFail: { age: 600, count: 1_000 },
    });
    const waitMs = Math.max(0, job.notAfter - Date.now()) + this.options.toolTimeoutMs + 1_000;
    let value: unknown;
    try {
      value = await added.waitUntilFinished(this.events, waitMs);
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes('timed out before finishing')) {
        await added.remove().catch(() => {});
        throw new GatewayError({
          type: 'upstream_timeout',
          message: `no MCP runner finished the tool call within ${waitMs} ms`,
        });
      }
      throw decodeFailure(message);
    }
    const parsed = toolResultSchema.safeParse(value);
    if (!parsed.success) throw decodeFailure('the runner answered a malformed result');
    return parsed.data;
  }

  private async waitingCount(): Promise<number> {
    const now = Date.now();
    if (now - this.counted.atMs > COUNT_TTL_MS) {
      this.counted = { value: await this.queue.getWaitingCount(), atMs: now };
    }
    return this.counted.value;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    await this.events.close();
    await this.queue.close();
    await Promise.all([this.connection.quit().catch(() => {}), this.eventsConnection.quit().catch(() => {})]);
  }
}

/**
 * The gateway error a failed job's text carries (the worker wrote it), validated against the error wire
 * schema; text that carries none (a job lost with its runner, a BullMQ error of its own) is a 502.
 */
function decodeFailure(message: string): GatewayError {
  const carried = decodeGatewayError(message);
  if (carried) return carried;
  return new GatewayError({
    type: 'upstream_unreachable',
    message: `the tool call failed on its runner: ${message}`,
  });
}
