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

/**
 * `/metrics` is open by default, as Prometheus expects and as peers ship it (Bifrost, LiteLLM): scrapes are
 * usually confined by the network. It names providers, models, rule ids and rates (never a key or a user), so on
 * an address other machines reach, start-up says that anyone there reads them unless GW_METRICS_TOKEN is set.
 */
export function metricsExposureWarning(host: string, metricsToken: string | undefined): string | undefined {
  if (isLoopback(host) || metricsToken !== undefined) return undefined;
  return (
    `gw listens on ${host} and GW_METRICS_TOKEN is not set: anyone who can reach this port reads /metrics ` +
    '(providers, models, traffic and error rates). Set GW_METRICS_TOKEN, or keep the port off networks you do not trust.'
  );
}
