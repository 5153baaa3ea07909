import type { RouteGroup } from '../http/route.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { surfaceRoutes } from '../surfaces/index.ts';
import type { SurfaceDependencies } from '../surfaces/shared/surface-call.ts';
import { completionRoutes } from './completion-routes.ts';
import { type McpRouteModuleDependencies, mcpRoutes } from './mcp-routes.ts';

/** What every route module may use. */
export type RouteModuleDependencies = SurfaceDependencies &
  Pick<McpRouteModuleDependencies, 'mcp'> & {
    /** The native chat paths' pipeline: MCP tools and the agent loop when MCP is configured (docs/mcp.md). */
    chatPipeline: Pipeline;
  };

/** Every inference route of ingress: each module adds its own here. */
export function buildRoutes(dependencies: RouteModuleDependencies): RouteGroup[] {
  return [
    { routes: completionRoutes({ ...dependencies, pipeline: dependencies.chatPipeline }) },
    ...surfaceRoutes(dependencies),
    { routes: mcpRoutes(dependencies) },
  ];
}
