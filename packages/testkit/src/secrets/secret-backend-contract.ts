import { createMetrics, parseGatewayConfig, type VaultConfig } from '@gw/shared';
import { type SecretFailure, type SecretResolver, startSecretResolver } from '@gw/vault';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogger } from '../captured-logger.ts';
import type { FakeSecretManager } from './fake-secret-manager.ts';

export interface SecretBackendContractOptions {
  /** Names the backend in the test titles. */
  name: string;
  start: () => Promise<FakeSecretManager>;
  /** What the resolver needs beyond the config to reach the fake (a Google token). */
  resolverExtras?: (fake: FakeSecretManager) => { googleTokenSource?: () => Promise<string> };
}

/**
 * What every secret backend owes the resolver, run against a fake that speaks the backend's real API: a field
 * resolved at start, a rotation picked up by a refresh, the last good value kept when reads fail (with a
 * warning, a metric and an `onSecretFailure` event), a start-up error naming the reference, and no value in
 * logs, errors or the status.
 */
export function runSecretBackendContract(options: SecretBackendContractOptions): void {
  describe(`secret backend contract: ${options.name}`, () => {
    const cleanup: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const step of cleanup.splice(0).reverse()) await step();
    });

    async function setUp(
      references: (fake: FakeSecretManager) => string[],
      prepare?: (fake: FakeSecretManager) => void,
    ) {
      const fake = await options.start();
      cleanup.push(() => fake.close());
      prepare?.(fake);
      const refs = references(fake);
      // A config as an operator writes it: the references as provider keys, the vault section for the fake.
      const config = parseGatewayConfig({
        providers: {
          openai: { keys: refs.map((value, index) => ({ id: `k${index}`, value, models: [], weight: 1 })) },
        },
        vault: fake.vaultConfig as Partial<VaultConfig>,
      });
      const { logger, lines } = capturedLogger('vault-contract');
      const metrics = createMetrics({ service: 'vault-contract', defaultMetrics: false });
      const start = () =>
        startSecretResolver({
          config,
          environment: {},
          logger,
          metrics,
          ...options.resolverExtras?.(fake),
        });
      return { fake, refs, lines, metrics, start };
    }

    async function started(setup: Awaited<ReturnType<typeof setUp>>): Promise<SecretResolver> {
      const resolver = await setup.start();
      cleanup.push(() => resolver.close());
      return resolver;
    }

    it('resolves the fields of a secret at start, reading the secret once for both', async () => {
      const setup = await setUp(
        (fake) => [fake.reference('gw-openai', 'api_key'), fake.reference('gw-openai', 'org')],
        (fake) => fake.put('gw-openai', { api_key: 'sk-contract-one-0001', org: 'org-contract' }),
      );
      const resolver = await started(setup);
      expect(resolver.lookup(setup.refs[0] as string)).toBe('sk-contract-one-0001');
      expect(resolver.lookup(setup.refs[1] as string)).toBe('org-contract');
      expect(setup.fake.reads()).toBe(1);
    });

    it('picks up a rotated secret on refresh', async () => {
      const setup = await setUp(
        (fake) => [fake.reference('rotating', 'api_key')],
        (fake) => fake.put('rotating', { api_key: 'sk-before-rotation-0001' }),
      );
      const resolver = await started(setup);
      const reference = setup.refs[0] as string;
      expect(resolver.lookup(reference)).toBe('sk-before-rotation-0001');
      setup.fake.put('rotating', { api_key: 'sk-after-rotation-0002' });
      expect(resolver.lookup(reference)).toBe('sk-before-rotation-0001');
      const status = await resolver.refresh();
      expect(resolver.lookup(reference)).toBe('sk-after-rotation-0002');
      expect(status).toEqual([
        expect.objectContaining({
          reference,
          backend: setup.fake.reference('x').split('.')[0],
          resolved: true,
        }),
      ]);
    });

    it('keeps the last good value when reads fail: a warning, a metric and an event, never the value', async () => {
      const setup = await setUp(
        (fake) => [fake.reference('flaky', 'api_key')],
        (fake) => fake.put('flaky', { api_key: 'sk-last-good-value-0001' }),
      );
      const resolver = await started(setup);
      const reference = setup.refs[0] as string;
      const failures: SecretFailure[] = [];
      resolver.onSecretFailure((failure) => failures.push(failure));
      setup.fake.breakReads(503);
      setup.fake.put('flaky', { api_key: 'sk-unreachable-value-0002' });
      const [status] = await resolver.refresh();
      expect(resolver.lookup(reference)).toBe('sk-last-good-value-0001');
      expect(status).toMatchObject({ reference, resolved: true, last_error: expect.stringContaining('503') });
      expect(status?.last_success_at).not.toBeNull();
      expect(failures).toEqual([expect.objectContaining({ reference, servingLastGood: true })]);
      const counted = await setup.metrics.vaultRefreshFailures.get();
      expect(counted.values.reduce((sum, value) => sum + value.value, 0)).toBe(1);
      expect(setup.lines.join('')).toContain('keeping the last good value');
      // Healed: the next refresh reads the current version.
      setup.fake.heal();
      await resolver.refresh();
      expect(resolver.lookup(reference)).toBe('sk-unreachable-value-0002');
      const everything = JSON.stringify([resolver.status(), failures]) + setup.lines.join('');
      expect(everything).not.toContain('sk-last-good-value-0001');
      expect(everything).not.toContain('sk-unreachable-value-0002');
    });

    it('refuses to start on a reference it cannot read, naming it and no value', async () => {
      const setup = await setUp(
        (fake) => [fake.reference('present', 'api_key'), fake.reference('missing', 'api_key')],
        (fake) => fake.put('present', { api_key: 'sk-present-value-0001' }),
      );
      const error = await setup.start().then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).toContain(setup.refs[1]);
      expect(error?.message).not.toContain(`'${setup.refs[0]}'`);
      expect(error?.message).not.toContain('sk-present-value-0001');
    });

    it('refuses to start on a field the secret does not have', async () => {
      const setup = await setUp(
        (fake) => [fake.reference('fields', 'no_such_field')],
        (fake) => fake.put('fields', { api_key: 'sk-fields-value-0001' }),
      );
      await expect(setup.start()).rejects.toThrow(/no_such_field/);
    });
  });
}
