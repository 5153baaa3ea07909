import { capturedLogger } from '@gw/testkit';
import { afterEach, expect, it, vi } from 'vitest';
import type { SecretBackend } from './secret-backend.ts';
import { SecretResolver } from './secret-resolver.ts';

const resolvers: SecretResolver[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const resolver of resolvers.splice(0)) await resolver.close();
});

function setUp(read: SecretBackend['read']) {
  const { logger, lines } = capturedLogger('resolver-test');
  const backend = { name: 'aws-sm' as const, read: vi.fn(read) };
  const resolver = new SecretResolver({ backends: { 'aws-sm': backend }, logger, refreshIntervalMs: 60_000 });
  resolvers.push(resolver);
  return { resolver, backend, lines };
}

it('reads again on its interval, and stops when closed', async () => {
  vi.useFakeTimers();
  let version = 1;
  const { resolver, backend } = setUp(async () => `value-${version}`);
  await resolver.start(['aws-sm.gw/key']);
  version = 2;
  await vi.advanceTimersByTimeAsync(60_000);
  expect(resolver.lookup('aws-sm.gw/key')).toBe('value-2');
  await resolver.close();
  await vi.advanceTimersByTimeAsync(180_000);
  expect(backend.read).toHaveBeenCalledTimes(2);
});

it('shares one refresh between concurrent callers', async () => {
  const { resolver, backend } = setUp(async () => 'value');
  await resolver.start(['aws-sm.gw/key']);
  await Promise.all([resolver.refresh(), resolver.refresh(), resolver.refresh()]);
  expect(backend.read).toHaveBeenCalledTimes(2);
});

it('has no value for a reference the config did not name, and warns about it once', async () => {
  const { resolver, backend, lines } = setUp(async () => 'value');
  await resolver.start([]);
  expect(resolver.lookup('aws-sm.gw/elsewhere')).toBeUndefined();
  expect(resolver.lookup('aws-sm.gw/elsewhere')).toBeUndefined();
  expect(backend.read).not.toHaveBeenCalled();
  expect(lines.filter((line) => line.includes('does not name'))).toHaveLength(1);
});

it('tells failure listeners, and a throwing listener does not stop the others', async () => {
  let fail = false;
  const { resolver } = setUp(async () => {
    if (fail) throw new Error('AWS Secrets Manager answered 500');
    return 'value';
  });
  await resolver.start(['aws-sm.gw/key']);
  const seen: string[] = [];
  resolver.onSecretFailure(() => {
    throw new Error('listener bug');
  });
  const unsubscribe = resolver.onSecretFailure((failure) => seen.push(failure.error));
  fail = true;
  await resolver.refresh();
  unsubscribe();
  await resolver.refresh();
  expect(seen).toEqual(['AWS Secrets Manager answered 500']);
  expect(resolver.lookup('aws-sm.gw/key')).toBe('value');
});

it('refuses to start on a reference whose backend is not set up, naming it', async () => {
  const { resolver } = setUp(async () => 'value');
  await expect(resolver.start(['vault.secret/gw#key'])).rejects.toThrow(
    "cannot resolve secret reference 'vault.secret/gw#key' (the vault backend is not configured",
  );
});
