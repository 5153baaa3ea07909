import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from './gateway-config.ts';

describe('the alerts section of the gateway config', () => {
  it('evaluates every 30 s with a 90 s lease by default', () => {
    expect(parseGatewayConfig({}).alerts).toEqual({
      enabled: true,
      evaluation_interval_ms: 30_000,
      lease_ms: 90_000,
      history_limit: 1_000,
    });
  });

  it('names the field: a lease no longer than the interval would lapse between renewals', () => {
    expect(() =>
      parseGatewayConfig({ alerts: { evaluation_interval_ms: 60_000, lease_ms: 30_000 } }),
    ).toThrow('alerts.lease_ms');
    expect(() => parseGatewayConfig({ alerts: { evaluation_interval_ms: 10 } })).toThrow(
      'alerts.evaluation_interval_ms',
    );
    expect(() => parseGatewayConfig({ alerts: { rules: [] } })).toThrow(/alerts/);
  });
});
