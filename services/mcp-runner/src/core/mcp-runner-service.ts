import { GatewayError } from '@gw/shared';
import { traceContextSchema } from '@gw/shared/tracing';
import { z } from 'zod';

/** The answer of a tool execution (docs/mcp.md "Executing a tool"). */
export interface ToolMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
}

/** One tool call as a job (the BullMQ job's data, and the in-process queue's item). */
export const toolJobSchema = z.object({
  client: z.string().min(1),
  /** The server's own tool name. */
  tool: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  callId: z.string(),
  requestId: z.string(),
  /** Epoch ms after which no runner starts (or restarts) the call: its caller has given up. */
  notAfter: z.number(),
  /** The caller's trace context, when it traces: the runner's span of the call is its child. */
  trace: traceContextSchema.optional(),
});
export type ToolJob = z.infer<typeof toolJobSchema>;

/** What a tool answered. A tool's own failure (`isError`) is a result, not an error. */
export const toolResultSchema = z.object({ content: z.string(), isError: z.boolean() });
export type ToolResult = z.infer<typeof toolResultSchema>;

/**
 * Runs tool jobs: the in-process queue (embedded) and the BullMQ queue client (cluster) implement it alike.
 * Rejects with a GatewayError: 429 queue_full, 504 upstream_timeout, 502 upstream_unreachable, or what the
 * runner decided (400 / 403).
 */
export interface ToolExecutor {
  execute(job: ToolJob): Promise<ToolResult>;
  close(): Promise<void>;
}

/** A ToolExecutor's answer when `maxQueued` calls already wait. */
export function queueFull(maxQueued: number): GatewayError {
  return new GatewayError({
    type: 'queue_full',
    message: `the MCP tool queue is full (${maxQueued} calls waiting); retry later`,
    retryAfter: 1,
  });
}

/**
 * A failed job. `retryable` is true only for transport failures (the connection to the MCP server failed or
 * closed): another attempt, maybe on another runner, may succeed. Everything else is final.
 */
export class ToolJobFailure extends Error {
  readonly error: GatewayError;
  readonly retryable: boolean;

  constructor(error: GatewayError, retryable: boolean) {
    super(error.message);
    this.name = 'ToolJobFailure';
    this.error = error;
    this.retryable = retryable;
  }
}
