import { GatewayError, invalidRequest, toGatewayError } from '@gw/shared';
import { type ToolJob, ToolJobFailure, type ToolResult, toolJobSchema } from './mcp-runner-service.ts';

/** What runs a validated job: the runner core (or a stand-in in tests). */
export interface ToolJobRunner {
  execute(job: ToolJob): Promise<ToolResult>;
}

/** How many times a job runs at most (the first run and two retries) and the first retry delay. */
export const TOOL_JOB_ATTEMPTS = 3;
export const TOOL_JOB_BACKOFF_MS = 200;

/**
 * The processor of a tool job, shared by the BullMQ worker (cluster) and the in-process queue (embedded):
 * validates the job's data and runs it. Every failure is a ToolJobFailure saying whether a retry may help.
 */
export async function processToolJob(runner: ToolJobRunner, data: unknown): Promise<ToolResult> {
  const parsed = toolJobSchema.safeParse(data);
  if (!parsed.success)
    throw new ToolJobFailure(invalidRequest(`invalid tool job: ${parsed.error.message}`), false);
  try {
    return await runner.execute(parsed.data);
  } catch (error) {
    if (error instanceof ToolJobFailure) throw error;
    if (error instanceof GatewayError) throw new ToolJobFailure(error, false);
    throw new ToolJobFailure(toGatewayError(error), false);
  }
}
