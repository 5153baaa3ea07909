import { decodeGatewayError, GatewayError } from '@gw/shared';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
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
  private readonly connection: Redis;
  private readonly eventsConnection: Redis;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  /** The waiting count, read from Redis at most every COUNT_TTL_MS. */
  private counted = { value: 0, atMs: Number.NEGATIVE_INFINITY };

  private constructor(options: BullToolQueueOptions) {
    this.options = options;
    const prefix = bullPrefix(options.redisPrefix);
    this.connection = bullConnection(options.redisUrl);
    this.eventsConnection = bullConnection(options.redisUrl);
    this.queue = new Queue(TOOL_QUEUE, { connection: this.connection, prefix });
    this.events = new QueueEvents(TOOL_QUEUE, { connection: this.eventsConnection, prefix });
    this.events.setMaxListeners(0);
  }

  static async open(options: BullToolQueueOptions): Promise<BullToolQueue> {
    const queue = new BullToolQueue(options);
    await Promise.all([queue.queue.waitUntilReady(), queue.events.waitUntilReady()]);
    return queue;
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
