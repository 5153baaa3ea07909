import { GatewayError } from '@gw/shared';
import type { Store } from '@gw/shared/store';

/** The state store, or 503 naming what lives there: a cluster admin started without REDIS_URL has none. */
export function requireStore(store: Store | undefined, what: string): Store {
  if (store) return store;
  throw new GatewayError({
    type: 'service_unavailable',
    message: `${what} live in the state store, and this admin has none (REDIS_URL)`,
  });
}
