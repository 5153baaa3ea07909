import type { IncomingHttpHeaders } from 'node:http';
import type { Admission, AuthorizeResult } from '@gw/governance';
import {
  type CatalogTool,
  type McpCatalog,
  parseIncludeHeader,
  resolveToolCall,
  type ToolAccess,
  type ToolExecutor,
  type ToolMessage,
} from '@gw/mcp-runner/control';
import { GatewayError, invalidRequest, type Live, type McpSettings, type ToolCall } from '@gw/shared';
import type { TraceContext } from '@gw/shared/tracing';
import { findVirtualKey, presentHeaderNames } from '../request/virtual-key-header.ts';
import type { IngressGuardrails } from './guardrail-stage.ts';

/** What ingress needs for MCP: the catalog of clients and tools, and the queue that runs calls on runners. */
export interface McpIngress {
  catalog: McpCatalog;
  executor: ToolExecutor;
  /** How tool calls run (`PUT /api/config`), followed live. */
  settings: Live<Pick<McpSettings, 'queue_timeout_ms' | 'agent_max_depth'>>;
}

export interface McpRouteDependencies extends McpIngress {
  admission: Admission;
  /** Guardrails on tool calls: arguments are the input, the tool's answer the output. */
  guardrails?: IngressGuardrails | undefined;
}

const INCLUDE_TOOLS_HEADER = 'x-gw-mcp-include-tools';

/**
 * What a request may use: the key's MCP policy (in governance's answer; none without a key) and the
 * `x-gw-mcp-include-tools` entries.
 */
export function accessOf(authorization: AuthorizeResult, headers: IncomingHttpHeaders): ToolAccess {
  const include = parseIncludeHeader(headers[INCLUDE_TOOLS_HEADER]);
  if (!authorization.virtualKeyId) return { include };
  return { keyPolicy: authorization.mcpTools ?? [], keyName: authorization.virtualKeyName, include };
}

/** A tool call's governance (required headers 400, key 401/403: before anything runs), then its access. */
export async function resolveAccess(
  mcp: McpRouteDependencies,
  request: { requestId: string; headers: IncomingHttpHeaders; trace?: TraceContext | undefined },
): Promise<{ access: ToolAccess; authorization: AuthorizeResult }> {
  const authorization = await mcp.admission.authorize(
    {
      requestId: request.requestId,
      kind: 'mcp',
      virtualKey: findVirtualKey(request.headers),
      headerNames: presentHeaderNames(request.headers),
      targets: [],
    },
    { trace: request.trace },
  );
  return { access: accessOf(authorization, request.headers), authorization };
}

/** The tool a call names, allowed for this request; a miss reloads the catalog once (it may be a moment old). */
export async function resolveTool(mcp: McpIngress, name: string, access: ToolAccess): Promise<CatalogTool> {
  try {
    return resolveToolCall(mcp.catalog.snapshot(), name, access);
  } catch (error) {
    const stale =
      error instanceof GatewayError &&
      (error.type === 'mcp_not_configured' ||
        error.type === 'mcp_tool_not_found' ||
        error.type === 'service_unavailable');
    if (!stale) throw error;
    await mcp.catalog.refresh();
    return resolveToolCall(mcp.catalog.snapshot(), name, access);
  }
}

/** `function.arguments`: a JSON object as text (empty means no arguments). */
export function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidRequest(
      `function.arguments: is not valid JSON: ${(error as Error).message}`,
      'function.arguments',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest('function.arguments: must be a JSON object', 'function.arguments');
  }
  return value as Record<string, unknown>;
}

/** Runs an allowed tool call on a runner; the tool's own failure is a result (`isError`). */
export async function runToolCall(
  mcp: McpIngress,
  options: { call: ToolCall; tool: CatalogTool; requestId: string; trace?: TraceContext | undefined },
): Promise<{ message: ToolMessage; isError: boolean }> {
  const result = await mcp.executor.execute({
    client: options.tool.client,
    tool: options.tool.tool,
    arguments: parseArguments(options.call.function.arguments),
    callId: options.call.id,
    requestId: options.requestId,
    notAfter: Date.now() + mcp.settings.current().queue_timeout_ms,
    // The context crosses the queue in the job's data (BullMQ, or the in-process queue).
    ...(options.trace && { trace: options.trace }),
  });
  return {
    message: { role: 'tool', content: result.content, tool_call_id: options.call.id },
    isError: result.isError,
  };
}
