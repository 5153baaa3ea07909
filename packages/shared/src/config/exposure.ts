import type { ClientConfig } from './gateway-config.ts';

/** Addresses only this machine reaches. */
function isLoopback(host: string): boolean {
  return (
    host === 'localhost' ||
    host === '::1' ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * What start-up must say loudly when the inference port takes requests without a virtual key from other
 * machines: anyone who reaches it spends the operator's provider keys. Undefined when there is nothing to say.
 */
export function exposureWarning(
  host: string,
  client: Pick<ClientConfig, 'enforce_virtual_keys'>,
): string | undefined {
  if (isLoopback(host) || client.enforce_virtual_keys) return undefined;
  return (
    `gw listens on ${host} and virtual keys are optional: anyone who can reach this port spends your provider ` +
    'keys. Set client.enforce_virtual_keys: true (and create keys), or GW_HOST=127.0.0.1.'
  );
}
