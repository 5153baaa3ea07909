import type { Live, SystemSettings } from '@gw/shared';
import type { GatewayAddress } from '../../api-types.ts';
import type { AdminRoute } from '../http/admin-route.ts';

export interface GatewayAddressOptions {
  /** The live client settings: `client.public_url`, the operator's word, wins. */
  client: Live<SystemSettings['client']>;
  /** GW_PUBLIC_URL: the ingress's address as the deployment knows it (a cluster's launcher sets it). */
  deployment: string | undefined;
}

/**
 * `GET /api/gateway-address`: where apps reach gw's inference API, for the console's snippets and playground
 * (any authenticated caller: an `open` row). Null when nothing says: the console then uses its own address.
 */
export function createGatewayAddress(options: GatewayAddressOptions): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/gateway-address',
      permission: 'open',
      handle: async () => {
        const setting = options.client.current().public_url;
        const body: GatewayAddress = setting
          ? { public_url: setting, source: 'setting' }
          : options.deployment
            ? { public_url: options.deployment, source: 'deployment' }
            : { public_url: null, source: null };
        return { status: 200, body };
      },
    },
  ];
}
