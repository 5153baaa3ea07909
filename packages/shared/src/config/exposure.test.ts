import { expect, it } from 'vitest';
import { exposureWarning } from './exposure.ts';

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
