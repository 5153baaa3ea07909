import {
  checkDestinations,
  checkOutboundUrl,
  type GatewayConfig,
  GatewayError,
  invalidRequest,
  type Logger,
  notFound,
  type OutboundPolicy,
  type ProviderConfig,
  providerConfigSchema,
  providerNameSchema,
  refuseMovedSecrets,
  refuseSecretReferences,
  type SecretLookup,
  type SecretReferenceRule,
} from '@gw/shared';
import type { ProviderKeyLimits } from '@gw/shared/health';
import {
  type ChangeFollower,
  type Collection,
  defineCollection,
  followChanges,
  logInvalidDocuments,
  type Store,
} from '@gw/shared/store';
import { patchProviderConfig } from './provider-patch.ts';
import {
  isBuiltInProvider,
  keepRedactedSecrets,
  type LoadedProvider,
  loadProvider,
  redactProvider,
  withKeyIds,
} from './provider-registry.ts';
import type { ProviderWriteOptions } from './router-service.ts';

const PROVIDERS_COLLECTION = 'providers';

interface ProviderConfigsDependencies {
  store: Store;
  logger: Logger;
  /** Where `env.NAME` references of provider keys resolve: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
  /** Where secret-manager references resolve (docs/vault.md): the process's resolver. */
  secrets?: SecretLookup | undefined;
  /** The config file's outbound address policy (docs/network.md): base URLs written through the API pass it. */
  outbound: OutboundPolicy;
  /** Which references Admin may name in a provider written through the API: `admin.secret_references`. */
  secretReferences: SecretReferenceRule;
}
const PROVIDERS_CHANGED_CHANNEL = 'providers.changed';

const hasField = (value: unknown, field: string) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, field);

/** The `token_uri` of a service-account key file written as JSON text, if it is one. */
function tokenUriOf(value: unknown): unknown {
  if (typeof value !== 'string' || !value.trimStart().startsWith('{')) return undefined;
  try {
    return (JSON.parse(value) as { token_uri?: unknown }).token_uri;
  } catch {
    return undefined;
  }
}

/**
 * Refuses base URLs and per-key endpoints the outbound address policy refuses (admin API writes): metadata and
 * link-local in every notation, private ranges unless the config file allows them. Connections are checked
 * again when they open (UpstreamClient), for names that resolve elsewhere later.
 */
async function assertAllowedUpstreams(config: ProviderConfig, policy: OutboundPolicy): Promise<void> {
  await checkDestinations(providerConfigSchema, config, policy);
  // A service-account key file written as JSON text names where its tokens come from (Vertex honours
  // `token_uri`): a destination inside a credential's value, which no schema field can declare.
  const urls: Array<[string, unknown]> = config.keys.flatMap(
    (key, index): Array<[string, unknown]> => [
      [`keys[${index}].value.token_uri`, tokenUriOf(key.value)],
      [`keys[${index}].config.auth_credentials.token_uri`, tokenUriOf(key.config?.['auth_credentials'])],
    ],
  );
  for (const [field, url] of urls) {
    if (typeof url !== 'string') continue;
    // A value that is no URL at all is the schema's and the adapter's to refuse, as before.
    if (!URL.canParse(url)) continue;
    await checkOutboundUrl(url, policy, { field });
  }
}

/**
 * Provider configs: the store holds them, every router replica keeps them loaded (adapters, keys, base URLs)
 * and reloads one when another replica publishes its change (hot reload without a restart).
 */
export class ProviderConfigs {
  private readonly loaded = new Map<string, LoadedProvider>();
  private follower: ChangeFollower | undefined;

  private readonly dependencies: ProviderConfigsDependencies;
  /**
   * The configs as the admin API reads them. Loading (`apply`) validates more than the schema and keeps the
   * provider it had when a stored config fails, so a replica goes on serving it.
   */
  private readonly documents: Collection<ProviderConfig>;

  private constructor(dependencies: ProviderConfigsDependencies) {
    this.dependencies = dependencies;
    this.documents = defineCollection(dependencies.store, PROVIDERS_COLLECTION, providerConfigSchema, {
      invalid: logInvalidDocuments(dependencies.logger),
    });
  }

  /** Writes the config file's providers (the file wins for the names it lists), loads all, follows changes. */
  static async start(
    dependencies: ProviderConfigsDependencies & { seed?: GatewayConfig['providers'] | undefined },
  ): Promise<ProviderConfigs> {
    const configs = new ProviderConfigs(dependencies);
    const { store, logger } = dependencies;
    const seed = async () => {
      for (const [name, config] of Object.entries(dependencies.seed ?? {})) {
        loadProvider(name, config, dependencies);
        await configs.documents.put(name, withKeyIds(name, config));
      }
    };
    await seed();
    configs.follower = await followChanges({
      store,
      channel: PROVIDERS_CHANGED_CHANNEL,
      logger,
      onMessage: (name) => {
        configs
          .reload(name)
          .catch((error) => logger.error({ err: error, provider: name }, 'provider reload failed'));
      },
      resync: () => configs.resync(),
      reseed: seed,
    });
    await configs.resync();
    return configs;
  }

  async close(): Promise<void> {
    await this.follower?.close();
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

  /** The rpm/tpm limits of every loaded provider's keys that serve (the health board shares them). */
  keyLimits(): ProviderKeyLimits[] {
    return [...this.loaded.values()].map((provider) => ({
      provider: provider.name,
      keys: provider.keys
        .filter((key) => key.weight > 0)
        .map((key) => ({ key: key.id, rpm: key.rpmLimit, tpm: key.tpmLimit, models: key.models })),
    }));
  }

  /** Re-reads one provider from the store (hot reload on every replica). */
  private async reload(name: string): Promise<void> {
    this.apply(name, await this.dependencies.store.get(PROVIDERS_COLLECTION, name));
  }

  /** Reads every provider again (a change notice may have been missed): what the store no longer holds goes. */
  private async resync(): Promise<void> {
    const stored = await this.dependencies.store.list(PROVIDERS_COLLECTION);
    const names = new Set(stored.map(({ id }) => id));
    for (const name of this.loaded.keys()) if (!names.has(name)) this.loaded.delete(name);
    for (const { id, value } of stored) this.apply(id, value);
  }

  private apply(name: string, stored: unknown): void {
    if (stored === undefined) {
      this.loaded.delete(name);
      return;
    }
    try {
      this.loaded.set(name, loadProvider(name, stored, this.dependencies));
    } catch (error) {
      this.dependencies.logger.error(
        { err: error, provider: name },
        'stored provider config is invalid; keeping the previous one',
      );
    }
  }

  async list(): Promise<Array<Record<string, unknown>>> {
    return (await this.documents.list())
      .map(({ id, value }) => redactProvider(id, value))
      .sort((left, right) => String(left['name']).localeCompare(String(right['name'])));
  }

  async get(name: string): Promise<Record<string, unknown>> {
    const config = await this.documents.get(name);
    if (!config) throw notFound(`provider '${name}'`);
    return redactProvider(name, config);
  }

  async put(
    name: string,
    input: unknown,
    options: ProviderWriteOptions & { create: boolean },
  ): Promise<Record<string, unknown>> {
    const validName = providerNameSchema.safeParse(name);
    if (!validName.success) {
      throw new GatewayError({
        type: 'invalid_request',
        message: `name: '${name.slice(0, 80)}' ${validName.error.issues[0]?.message ?? 'is not a valid provider name'}`,
        param: 'name',
      });
    }
    const stored = await this.documents.get(name);
    if (options.create && stored) {
      throw new GatewayError({
        type: 'conflict',
        message: `provider '${name}' already exists`,
      });
    }
    if (!options.create && !stored) throw notFound(`provider '${name}'`);
    // A PUT replaces the whole provider: one without `keys` would leave it nothing to serve with (PATCH keeps them).
    if (!options.create && stored && stored.keys.length > 0 && !hasField(input, 'keys')) {
      throw invalidRequest(
        'keys: is required in a PUT, which replaces the whole provider (PATCH changes only the fields it names; a read sent back carries its keys, their values masked)',
        'keys',
      );
    }
    return this.write(name, input, stored, options);
  }

  /** A merge patch of a stored provider (`patchProviderConfig`): what it does not name is kept, secrets too. */
  async patch(
    name: string,
    patch: Record<string, unknown>,
    options: ProviderWriteOptions = {},
  ): Promise<Record<string, unknown>> {
    const stored = await this.documents.get(name);
    if (!stored) throw notFound(`provider '${name}'`);
    return this.write(name, patchProviderConfig(stored, patch), stored, options);
  }

  /**
   * Validates a whole config, keeps the stored secrets its redacted values stand for, stores and announces it.
   * `env.NAME` references resolve from the process's environment and secret-manager ones with gw's identity, so
   * a write may name a new one only for a caller with `secrets:reference` (the one secret policy).
   */
  private async write(
    name: string,
    input: unknown,
    stored: ProviderConfig | undefined,
    options: ProviderWriteOptions,
  ): Promise<Record<string, unknown>> {
    refuseSecretReferences(providerConfigSchema, input, {
      mayReference: options.allowSecretReferences === true,
      references: this.dependencies.secretReferences,
      stored,
    });
    const loaded = loadProvider(name, input, this.dependencies);
    await assertAllowedUpstreams(loaded.config, this.dependencies.outbound);
    const config = keepRedactedSecrets(loaded.config, stored);
    refuseMovedSecrets(providerConfigSchema, config, {
      mayReference: options.allowSecretReferences === true,
      stored,
    });
    const final = loadProvider(name, config, this.dependencies);
    await this.documents.put(name, final.config);
    this.loaded.set(name, final);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
    return redactProvider(name, final.config);
  }

  async delete(name: string): Promise<void> {
    if (!(await this.documents.delete(name))) throw notFound(`provider '${name}'`);
    this.loaded.delete(name);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
  }
}
