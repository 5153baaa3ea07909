import { type GatewayConfig, LiveSettings } from '@gw/shared';

/** A core's settings and seed as a composition root hands them over, made from a parsed config (tests). */
export function liveGovernance(config: GatewayConfig) {
  const settings = LiveSettings.of(config);
  return {
    client: settings.client,
    settings: settings.governance,
    pricing: settings.pricing,
    seed: config.governance,
    /** The owner's side: a test changes settings through it, as `PUT /api/config` does. */
    live: settings,
  };
}
