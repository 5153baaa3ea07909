import {
  type GatewayConfig,
  GatewayError,
  type Logger,
  notFound,
  type ProviderConfig,
  providerConfigSchema,
  providerNameSchema,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import {
  isBuiltInProvider,
  keepRedactedSecrets,
  type LoadedProvider,
  loadProvider,
  redactProvider,
  withKeyIds,
} from './provider-registry.ts';

const PROVIDERS_COLLECTION = 'providers';

interface ProviderConfigsDependencies {
  store: Store;
  logger: Logger;
  /** Where `env.NAME` references of provider keys resolve: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
}
const PROVIDERS_CHANGED_CHANNEL = 'providers.changed';

/**
 * Provider configs: the store holds them, every router replica keeps them loaded (adapters, keys, base URLs)
 * and reloads one when another replica publishes its change (hot reload without a restart).
 */
export class ProviderConfigs {
  private readonly loaded = new Map<string, LoadedProvider>();
  private unsubscribe: (() => Promise<void>) | undefined;

  private readonly dependencies: ProviderConfigsDependencies;

  private constructor(dependencies: ProviderConfigsDependencies) {
    this.dependencies = dependencies;
  }

  /** Writes the config file's providers (the file wins for the names it lists), loads all, follows changes. */
  static async start(
    dependencies: ProviderConfigsDependencies & { seed?: GatewayConfig['providers'] | undefined },
  ): Promise<ProviderConfigs> {
    const configs = new ProviderConfigs(dependencies);
    const { store, logger } = dependencies;
    for (const [name, config] of Object.entries(dependencies.seed ?? {})) {
      loadProvider(name, config, dependencies.environment);
      await store.put(PROVIDERS_COLLECTION, name, withKeyIds(name, config));
    }
    for (const { id } of await store.list(PROVIDERS_COLLECTION)) await configs.reload(id);
    configs.unsubscribe = await store.subscribe(PROVIDERS_CHANGED_CHANNEL, (name) => {
      configs
        .reload(name)
        .catch((error) => logger.error({ err: error, provider: name }, 'provider reload failed'));
    });
    return configs;
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** The loaded provider of a name: provider_not_configured for a known one, unknown_provider otherwise. */
  resolve(name: string): LoadedProvider {
    const provider = this.loaded.get(name);
    if (provider) return provider;
    if (isBuiltInProvider(name)) {
      throw new GatewayError({
        type: 'provider_not_configured',
        message: `provider '${name}' is not configured`,
        provider: name,
      });
    }
    throw new GatewayError({
      type: 'unknown_provider',
      message: `unknown provider '${name}'`,
      provider: name,
    });
  }

  /** Re-reads one provider from the store (hot reload on every replica). */
  private async reload(name: string): Promise<void> {
    const stored = await this.dependencies.store.get(PROVIDERS_COLLECTION, name);
    if (stored === undefined) {
      this.loaded.delete(name);
      return;
    }
    try {
      this.loaded.set(name, loadProvider(name, stored, this.dependencies.environment));
    } catch (error) {
      this.dependencies.logger.error(
        { err: error, provider: name },
        'stored provider config is invalid; keeping the previous one',
      );
    }
  }

  private async stored(name: string): Promise<ProviderConfig | undefined> {
    const value = await this.dependencies.store.get(PROVIDERS_COLLECTION, name);
    if (value === undefined) return undefined;
    const parsed = providerConfigSchema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  async list(): Promise<Array<Record<string, unknown>>> {
    const stored = await this.dependencies.store.list(PROVIDERS_COLLECTION);
    return stored
      .flatMap(({ id, value }) => {
        const parsed = providerConfigSchema.safeParse(value);
        return parsed.success ? [redactProvider(id, parsed.data)] : [];
      })
      .sort((left, right) => String(left['name']).localeCompare(String(right['name'])));
  }

  async get(name: string): Promise<Record<string, unknown>> {
    const config = await this.stored(name);
    if (!config) throw notFound(`provider '${name}'`);
    return redactProvider(name, config);
  }

  async put(name: string, input: unknown, options: { create: boolean }): Promise<Record<string, unknown>> {
    const validName = providerNameSchema.safeParse(name);
    if (!validName.success) {
      throw new GatewayError({
        type: 'invalid_request',
        message: `name: '${name.slice(0, 80)}' ${validName.error.issues[0]?.message ?? 'is not a valid provider name'}`,
        param: 'name',
      });
    }
    const stored = await this.stored(name);
    if (options.create && stored) {
      throw new GatewayError({
        type: 'conflict',
        message: `provider '${name}' already exists`,
      });
    }
    if (!options.create && !stored) throw notFound(`provider '${name}'`);
    const loaded = loadProvider(name, input, this.dependencies.environment);
    const config = keepRedactedSecrets(loaded.config, stored);
    const final = loadProvider(name, config, this.dependencies.environment);
    await this.dependencies.store.put(PROVIDERS_COLLECTION, name, final.config);
    this.loaded.set(name, final);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
    return redactProvider(name, final.config);
  }

  async delete(name: string): Promise<void> {
    if (!(await this.dependencies.store.delete(PROVIDERS_COLLECTION, name)))
      throw notFound(`provider '${name}'`);
    this.loaded.delete(name);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
  }
}
