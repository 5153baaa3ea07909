import { decodeGatewayError, GatewayError } from '@gw/shared';
import { z } from 'zod';

/** The answer of a tool execution (SPEC.md "Tool message"). */
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
});
export type ToolJob = z.infer<typeof toolJobSchema>;

/** What a tool answered. A tool's own failure (`isError`) is a result, not an error. */
export interface ToolResult {
  content: string;
  isError: boolean;
}

export const toolResultSchema = z.object({ content: z.string(), isError: z.boolean() });

/**
 * Runs tool jobs: the in-process queue (embedded) and the BullMQ queue client (cluster) implement it alike.
 * Rejects with a GatewayError: 429 queue_full, 504 upstream_timeout, 502 upstream_unreachable, or what the
 * runner decided (400 / 403).
 */
export interface ToolExecutor {
  execute(job: ToolJob): Promise<ToolResult>;
  close(): Promise<void>;
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

/** A job failure as text (BullMQ keeps only a message): the gateway error's JSON. */
export function encodeFailure(error: GatewayError): string {
  return JSON.stringify(error.toJSON());
}

/** The gateway error a failed job carried; a failure that is not one (a job lost with its runner) is a 502. */
export function decodeFailure(message: string): GatewayError {
  const carried = decodeGatewayError(message);
  if (carried) return carried;
  return new GatewayError({
    type: 'upstream_unreachable',
    message: `the tool call failed on its runner: ${message}`,
  });
}
