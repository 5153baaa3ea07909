import { ATTRIBUTES, type Tracer, traced } from '@gw/shared/tracing';
import type { ToolJobRunner } from './process-tool-job.ts';

/**
 * A runner with a span per tool run (GenAI conventions: `execute_tool {tool}`), child of the context the job
 * carries: the client, the tool, the call id, and a failure's type. A tool's own failure (`isError`) is
 * `error.type` tool_error. Arguments and results are recorded only with `tracing.include_content`. Each run
 * of a retried job is its own span. Used by the BullMQ worker (cluster) and the in-process queue (embedded).
 */
export function traceToolRunner(runner: ToolJobRunner, tracer: Tracer): ToolJobRunner {
  return {
    execute(job) {
      const span = tracer.startSpan(`execute_tool ${job.tool}`, {
        parent: job.trace,
        attributes: () => ({
          [ATTRIBUTES.operation]: 'execute_tool',
          [ATTRIBUTES.toolName]: job.tool,
          [ATTRIBUTES.toolCallId]: job.callId || undefined,
          [ATTRIBUTES.mcpClient]: job.client,
          [ATTRIBUTES.requestId]: job.requestId,
          ...(tracer.includeContent && { [ATTRIBUTES.toolArguments]: JSON.stringify(job.arguments) }),
        }),
      });
      return traced(
        span,
        () => runner.execute(job),
        (result) => ({
          ...(result.isError && { [ATTRIBUTES.errorType]: 'tool_error' }),
          ...(tracer.includeContent && { [ATTRIBUTES.toolResult]: result.content }),
        }),
      );
    },
  };
}
