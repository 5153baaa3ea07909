import type { RouterService } from '@gw/router';
import { methodNotAllowed, noEndpoint, validate } from '@gw/shared';
import {
  type LoadBalancerConfig,
  loadBalancerConfigSchema,
  readLoadBalancerConfig,
  writeLoadBalancerConfig,
} from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import type { AdminRequest, AdminResult } from './admin-app.ts';
import { requireStore } from './require-store.ts';

export interface LoadBalancerAdminOptions {
  router: RouterService;
  /** Where the config document lives (every replica's health board reads it); absent without a store. */
  store?: Store | undefined;
  /** The config file's `load_balancer`. */
  seed: LoadBalancerConfig;
}

/**
 * `GET /api/health/providers` (state, score, rates, latency, weights and last transitions of every provider,
 * key and model) and `GET|PUT /api/load-balancer/config` (a PUT changes the fields it names; every replica
 * applies it at its next recompute).
 */
export function createLoadBalancerAdmin(options: LoadBalancerAdminOptions) {
  async function health(request: AdminRequest, path: string): Promise<AdminResult> {
    if (request.segments.join('/') !== 'health/providers') throw noEndpoint(request.method, path);
    if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
    return { status: 200, body: await options.router.health() };
  }

  async function loadBalancer(request: AdminRequest, path: string): Promise<AdminResult> {
    if (request.segments.join('/') !== 'load-balancer/config') throw noEndpoint(request.method, path);
    const store = requireStore(options.store, 'the load balancer settings');
    const current = await readLoadBalancerConfig(store, options.seed);
    if (request.method === 'GET') return { status: 200, body: current };
    if (request.method !== 'PUT')
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or PUT' });
    const changes = await request.body();
    const weights = changes['score_weights'];
    const merged = { ...current, ...changes };
    if (weights && typeof weights === 'object')
      merged['score_weights'] = { ...current.score_weights, ...weights };
    const config = validate(loadBalancerConfigSchema, merged);
    await writeLoadBalancerConfig(store, config);
    return { status: 200, body: config };
  }

  return { health, 'load-balancer': loadBalancer };
}
