// Where apps reach gw's inference API, for the snippets and the playground: the operator's setting
// (`client.public_url`), else this page's own address when it serves `/v1` too (one host in front of both),
// else the ingress's address as the deployment knows it (a cluster's admin port serves no `/v1`).
import type { GatewayAddress } from '@gw/admin/api-types';
import { useQuery } from '@tanstack/react-query';
import { api } from './api.ts';

export interface KnownAddress {
  address: string;
  /** Who says: the setting, this page serving `/v1` itself, or the deployment (GW_PUBLIC_URL). */
  source: 'setting' | 'console' | 'deployment';
}

/** Whether this page's own host answers gw's inference API (the admin alone answers `/v1/*` with 404). */
async function consoleServesInference(): Promise<boolean> {
  try {
    const answer = await fetch('/v1/models', { headers: { accept: 'application/json' } });
    return answer.status !== 404;
  } catch {
    return false;
  }
}

async function findAddress(): Promise<KnownAddress> {
  const known = await api<GatewayAddress>('/api/gateway-address');
  if (known.source === 'setting' && known.public_url) return { address: known.public_url, source: 'setting' };
  if (!known.public_url || (await consoleServesInference()))
    return { address: location.origin, source: 'console' };
  return { address: known.public_url, source: 'deployment' };
}

/** The gateway's address for apps; undefined until known. */
export function useGatewayAddress(): KnownAddress | undefined {
  return useQuery({ queryKey: ['/api/gateway-address'], queryFn: findAddress, staleTime: 60_000 }).data;
}

/** What the address's source means, for the operator. */
export const ADDRESS_SOURCES: Record<KnownAddress['source'], string> = {
  setting: 'client.public_url in System config',
  console: "this console's own address, which serves /v1 too",
  deployment:
    "the ingress's address as the deployment knows it (GW_PUBLIC_URL); client.public_url in System config overrides it",
};
