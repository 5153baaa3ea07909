import { createLogger, GatewayError, onShutdown, toGatewayError } from '@gw/shared';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { McpRunnerCore } from './core/mcp-runner-core.ts';
import { TOOL_QUEUE } from './core/tool-queue.ts';

const logger = createLogger({ service: 'mcp-runner' });
const redisUrl = process.env['REDIS_URL'];
if (!redisUrl) {
  logger.fatal('REDIS_URL is not set: mcp-runner takes its jobs from BullMQ on Redis');
  process.exit(1);
}
const prefix = process.env['GW_REDIS_PREFIX'] ?? 'gw:';
const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
const core = new McpRunnerCore();

// A gateway error (unknown tool, no MCP) is final: it must not be retried, so it fails the job unrecoverably.
const worker = new Worker(
  TOOL_QUEUE,
  async (job: Job) => {
    try {
      return await core.executeTool(job.data.call);
    } catch (error) {
      const failure = toGatewayError(error);
      if (failure instanceof GatewayError) throw new UnrecoverableError(JSON.stringify(failure.toJSON()));
      throw error;
    }
  },
  { connection, prefix: `${prefix}bull`, concurrency: Number(process.env['GW_MCP_CONCURRENCY'] ?? 8) },
);
worker.on('error', (error) => logger.error({ err: error }, 'worker error'));
logger.info({ queue: TOOL_QUEUE }, 'mcp-runner working');

onShutdown(logger, [
  () => worker.close(),
  () => core.close(),
  async () => {
    await connection.quit();
  },
]);
