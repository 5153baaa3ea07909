import { closeOnDispose, encodeGatewayError, type Logger, toGatewayError } from '@gw/shared';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { ToolJobFailure } from '../core/mcp-runner-service.ts';
import { processToolJob, type ToolJobRunner } from '../core/process-tool-job.ts';
import { bullConnection, bullPrefix, TOOL_QUEUE } from './tool-queue-connection.ts';

export interface ToolWorkerOptions {
  redisUrl: string;
  redisPrefix: string;
  runner: ToolJobRunner;
  concurrency: number;
  /** How long a job's lock lasts without renewal; a dead worker's job is taken over after it (and a stall check). */
  lockDurationMs: number;
  /** How often workers look for jobs whose worker died. */
  stalledIntervalMs: number;
  /** Stored on each job it runs (`processedBy`), so an operator can tell which runner ran a call. */
  name: string;
  logger: Logger;
}

/**
 * A runner's BullMQ worker: runs tool jobs with the shared processor (which validates each job's data).
 * Transport failures throw a plain error (BullMQ retries them with backoff, possibly on another runner);
 * everything else is an UnrecoverableError. Both carry the gateway error's JSON as their message, which is
 * all BullMQ keeps of a failure; the queue client validates it when it decodes it.
 */
export function createToolWorker(
  options: ToolWorkerOptions,
): { worker: Worker; close(): Promise<void> } & AsyncDisposable {
  const connection = bullConnection(options.redisUrl);
  const worker = new Worker(
    TOOL_QUEUE,
    async (job: Job) => {
      try {
        return await processToolJob(options.runner, job.data);
      } catch (error) {
        const failure =
          error instanceof ToolJobFailure ? error : new ToolJobFailure(toGatewayError(error), false);
        const text = encodeGatewayError(failure.error);
        throw failure.retryable ? new Error(text) : new UnrecoverableError(text);
      }
    },
    {
      connection,
      prefix: bullPrefix(options.redisPrefix),
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: 1,
      // An idle worker long-polls for a marker that new jobs leave; a burst leaves one marker, which wakes
      // one runner: the others would sleep out BullMQ's default 5 s before taking what that runner's
      // concurrency leaves waiting. Half a second bounds that wait (an idle runner then polls twice a second).
      drainDelay: 0.5,
      name: options.name,
    },
  );
  worker.on('error', (error) => options.logger.error({ err: error }, 'tool worker error'));
  return closeOnDispose({
    worker,
    async close() {
      await worker.close();
      await connection.quit().catch(() => {});
    },
  });
}
