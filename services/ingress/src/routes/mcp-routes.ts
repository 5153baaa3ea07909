import { GatewayError, parseJson, readBody, toolCallSchema, validate } from '@gw/shared';
import type { BodyLimit, Route, RouteHandler } from '../http/route.ts';
import { guardedToolCall } from '../pipeline/guardrail-tool-call.ts';
import { type McpRouteDependencies, resolveAccess, resolveTool, runToolCall } from '../pipeline/mcp-tools.ts';

export interface McpRouteModuleDependencies {
  /** Absent when this ingress has no MCP (every call answers 400 mcp_not_configured). */
  mcp?: McpRouteDependencies | undefined;
  /** The most a body may hold, read at each request (`PUT /api/config` changes it). */
  bodyLimit: BodyLimit;
}

/** Set on a tool message whose tool reported a failure (`isError`); the body stays the native tool message. */
const TOOL_ERROR_HEADER = 'x-gw-mcp-tool-error';

/**
 * `POST /v1/mcp/tool/execute`: a ToolCall in, a tool message out (`tool_call_id` = the call's id). Governance
 * runs first, then the three filtering levels, then the call runs on an mcp-runner (through the queue).
 */
export function mcpRoutes(dependencies: McpRouteModuleDependencies): Route[] {
  const execute: RouteHandler = async (request, response, context) => {
    const { mcp } = dependencies;
    context.provider = 'mcp';
    if (!mcp) {
      throw new GatewayError({
        type: 'mcp_not_configured',
        message: 'MCP is not configured on this gateway',
      });
    }
    const trace = context.span?.context;
    const { access, authorization } = await resolveAccess(mcp, {
      requestId: context.requestId,
      headers: request.headers,
      trace,
    });
    const call = validate(
      toolCallSchema,
      parseJson(await readBody(request, dependencies.bodyLimit.current().max_request_body_bytes)),
    );
    const tool = await resolveTool(mcp, call.function.name, access);
    const run = (checked: typeof call) =>
      runToolCall(mcp, { call: checked, tool, requestId: context.requestId, trace });
    const { message, isError, status } = await guardedToolCall(mcp.guardrails, {
      call,
      tool,
      requestId: context.requestId,
      headers: request.headers,
      authorization,
      run,
    });
    const payload = JSON.stringify(message);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'x-request-id': context.requestId,
    };
    if (isError) headers[TOOL_ERROR_HEADER] = 'true';
    response.writeHead(status, headers);
    response.end(payload);
  };

  return [{ method: 'POST', path: '/v1/mcp/tool/execute', handler: execute }];
}
