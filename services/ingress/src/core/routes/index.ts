import { surfaceRoutes } from '../../surfaces/index.ts';
import { withMcpAgent } from '../mcp-agent.ts';
import type { Route } from '../route.ts';
import { type CompletionRouteDependencies, completionRoutes } from './completion-routes.ts';
import { type McpRouteModuleDependencies, mcpRoutes } from './mcp-routes.ts';

/** What every route module may use. */
export type RouteModuleDependencies = CompletionRouteDependencies & Pick<McpRouteModuleDependencies, 'mcp'>;

/** Every inference route of ingress: each module adds its own here. */
export function buildRoutes(dependencies: RouteModuleDependencies): Route[] {
  // The SPEC chat paths get MCP tools injected and the agent loop (docs/mcp.md).
  const { mcp } = dependencies;
  const chat = mcp ? { ...dependencies, pipeline: withMcpAgent(dependencies.pipeline, mcp) } : dependencies;
  return [...completionRoutes(chat), ...surfaceRoutes(dependencies), ...mcpRoutes(dependencies)];
}
