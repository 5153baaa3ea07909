import { GatewayError, methodNotAllowed, noEndpoint } from '@gw/shared';
import type { SecretResolver } from '@gw/vault';
import type { AdminRequest, AdminResult } from './admin-app.ts';

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
export function createVaultAdmin(options: VaultAdminOptions) {
  async function vault(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, action, ...rest] = request.segments;
    if (rest.length > 0 || (action !== 'secrets' && action !== 'refresh'))
      throw noEndpoint(request.method, path);
    const allowed = action === 'secrets' ? 'GET' : 'POST';
    if (request.method !== allowed) throw methodNotAllowed({ method: request.method, path, allowed });
    const { resolver } = options;
    if (!resolver) {
      throw new GatewayError({ type: 'not_found', message: 'this admin process has no secret resolver' });
    }
    if (action === 'secrets') return { status: 200, body: { secrets: resolver.status() } };
    await options.publishRefresh?.();
    return { status: 200, body: { secrets: await resolver.refresh() } };
  }

  return { vault };
}
