import type { Route } from '../route.ts';
import { type CompletionRouteDependencies, completionRoutes } from './completion-routes.ts';

/** What every route module may use. */
export type RouteModuleDependencies = CompletionRouteDependencies;

/** Every inference route of ingress: each module adds its own here. */
export function buildRoutes(dependencies: RouteModuleDependencies): Route[] {
  return [...completionRoutes(dependencies)];
}
