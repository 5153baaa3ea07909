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

/** The gateway's address for apps; undefined until known. */
export function useGatewayAddress(): KnownAddress | undefined {
  const known = useQuery({
    queryKey: ['/api/gateway-address'],
    queryFn: () => api<GatewayAddress>('/api/gateway-address'),
    staleTime: 60_000,
  }).data;
  const deployment = known?.source === 'deployment' ? known.public_url : null;
  // Asked once a tab (the admin alone answers 404, which the browser's console shows), only when it decides.
  const serves = useQuery({
    queryKey: ['console serves /v1'],
    queryFn: consoleServesInference,
    enabled: deployment !== null,
    staleTime: Number.POSITIVE_INFINITY,
  }).data;
  if (!known) return undefined;
  if (known.source === 'setting' && known.public_url) return { address: known.public_url, source: 'setting' };
  if (!deployment) return { address: location.origin, source: 'console' };
  if (serves === undefined) return undefined;
  return serves
    ? { address: location.origin, source: 'console' }
    : { address: deployment, source: 'deployment' };
}

/** What the address's source means, for the operator. */
export const ADDRESS_SOURCES: Record<KnownAddress['source'], string> = {
  setting: 'client.public_url in System config',
  console: "this console's own address, which serves /v1 too",
  deployment:
    "the ingress's address as the deployment knows it (GW_PUBLIC_URL); client.public_url in System config overrides it",
};
