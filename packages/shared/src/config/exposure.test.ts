import { expect, it } from 'vitest';
import { exposureWarning, metricsExposureWarning } from './exposure.ts';

it('warns when a non-loopback address serves requests without mandatory virtual keys', () => {
  const open = { enforce_virtual_keys: false };
  expect(exposureWarning('0.0.0.0', open)).toContain(
    'anyone who can reach this port spends your provider keys',
  );
  expect(exposureWarning('10.1.2.3', open)).toBeDefined();
  expect(exposureWarning('0.0.0.0', { enforce_virtual_keys: true })).toBeUndefined();
  for (const loopback of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) {
    expect(exposureWarning(loopback, open)).toBeUndefined();
  }
});

it('warns when /metrics is open to other machines (no GW_METRICS_TOKEN)', () => {
  expect(metricsExposureWarning('0.0.0.0', undefined)).toContain('GW_METRICS_TOKEN is not set');
  expect(metricsExposureWarning('0.0.0.0', 'a-token')).toBeUndefined();
  expect(metricsExposureWarning('127.0.0.1', undefined)).toBeUndefined();
});
