import { GatewayError } from '@gw/shared';
import type { SecretResolver } from '@gw/vault';
import type { VaultSecrets } from '../../api-types.ts';
import type { AdminRoute } from '../http/admin-route.ts';

export interface VaultAdminOptions {
  /** This process's secret resolver (docs/vault.md): the one of the whole gateway in embedded mode. */
  resolver?: Pick<SecretResolver, 'status' | 'refresh'> | undefined;
  /** Cluster mode: asks every router and ingress to refresh too (publishVaultRefresh through the store). */
  publishRefresh?: (() => Promise<void>) | undefined;
}

/**
 * `GET /api/vault/secrets`: each secret-manager reference with its backend, whether it has a value, its last
 * success and last error (never a value). `POST /api/vault/refresh`: reads them all again now (every process of
 * a cluster), answering the status after this process's read.
 */
export function createVaultAdmin(options: VaultAdminOptions): AdminRoute[] {
  function resolverOf() {
    if (options.resolver) return options.resolver;
    throw new GatewayError({ type: 'not_found', message: 'this admin process has no secret resolver' });
  }

  return [
    {
      method: 'GET',
      path: '/vault/secrets',
      permission: 'vault:read',
      handle: async () => ({ status: 200, body: { secrets: resolverOf().status() } satisfies VaultSecrets }),
    },
    {
      method: 'POST',
      path: '/vault/refresh',
      permission: 'vault:write',
      handle: async () => {
        const resolver = resolverOf();
        await options.publishRefresh?.();
        return { status: 200, body: { secrets: await resolver.refresh() } satisfies VaultSecrets };
      },
    },
  ];
}
