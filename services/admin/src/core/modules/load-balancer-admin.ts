import type { RouterService } from '@gw/router';
import { validate } from '@gw/shared';
import {
  type LoadBalancerConfig,
  loadBalancerConfigSchema,
  readLoadBalancerConfig,
  writeLoadBalancerConfig,
} from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import type { AdminRoute } from '../http/admin-route.ts';
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
export function createLoadBalancerAdmin(options: LoadBalancerAdminOptions): AdminRoute[] {
  const storeOf = () => requireStore(options.store, 'the load balancer settings');
  return [
    {
      method: 'GET',
      path: '/health/providers',
      permission: 'health:read',
      handle: async () => ({ status: 200, body: await options.router.health() }),
    },
    {
      method: 'GET',
      path: '/load-balancer/config',
      permission: 'health:read',
      handle: async () => ({ status: 200, body: await readLoadBalancerConfig(storeOf(), options.seed) }),
    },
    {
      method: 'PUT',
      path: '/load-balancer/config',
      permission: 'health:write',
      handle: async (request) => {
        const store = storeOf();
        const current = await readLoadBalancerConfig(store, options.seed);
        const changes = await request.body();
        const weights = changes['score_weights'];
        const merged = { ...current, ...changes };
        if (weights && typeof weights === 'object')
          merged['score_weights'] = { ...current.score_weights, ...weights };
        const config = validate(loadBalancerConfigSchema, merged);
        await writeLoadBalancerConfig(store, config);
        return { status: 200, body: config };
      },
    },
  ];
}
