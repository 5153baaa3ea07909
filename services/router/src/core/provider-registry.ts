import {
  GatewayError,
  PROVIDER_NAMES,
  type ProviderConfig,
  providerConfigSchema,
  resolveSecret,
} from '@gw/shared';
import type { SelectableKey } from './key-selector.ts';
import type { ProviderAdapter } from './providers/adapter.ts';
import { BASE_FORMAT_ADAPTERS, BUILT_IN_PROVIDERS } from './providers/registry.ts';

/** A provider ready to serve: its config, adapter, base URL and keys with secrets resolved. */
export interface LoadedProvider {
  name: string;
  config: ProviderConfig;
  adapter: ProviderAdapter;
  baseUrl: string;
  keys: SelectableKey[];
}

const BUILT_IN = new Set<string>(PROVIDER_NAMES);

/** Gives every key a stable id: the configured one, or `<provider>-key-<index>`. */
export function withKeyIds(name: string, config: ProviderConfig): ProviderConfig {
  return {
    ...config,
    keys: config.keys.map((key, index) => ({ ...key, id: key.id ?? `${name}-key-${index}` })),
  };
}

/** Validates a provider config against the adapters of this build; errors are 400s naming the problem. */
/**
 * A provider config as the router uses it: validated, its adapter and base URL chosen, its keys' `env.NAME`
 * references resolved from `environment` (the process's, injected by main; the store keeps the references).
 */
export function loadProvider(name: string, input: unknown, environment: NodeJS.ProcessEnv): LoadedProvider {
  const parsed = providerConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError({
      type: 'invalid_request',
      message: `provider '${name}': ${issue?.path.join('.') || 'config'}: ${issue?.message ?? 'invalid'}`,
      param: issue?.path.join('.') ?? null,
    });
  }
  const config = withKeyIds(name, parsed.data);
  const custom = config.custom_provider_config;
  let adapter: ProviderAdapter | undefined;
  let defaultBaseUrl: string | undefined;
  if (BUILT_IN.has(name)) {
    if (custom)
      throw invalid(`provider '${name}' is built in; custom_provider_config is only for new provider names`);
    const entry = BUILT_IN_PROVIDERS[name as keyof typeof BUILT_IN_PROVIDERS];
    adapter = entry.adapter;
    defaultBaseUrl = entry.defaultBaseUrl;
  } else {
    if (!custom) {
      throw invalid(
        `'${name}' is not a built-in provider; a custom provider needs custom_provider_config.base_provider`,
      );
    }
    adapter = restrictOperations(BASE_FORMAT_ADAPTERS[custom.base_provider], custom.allowed_operations);
  }
  // Azure-style providers may name their endpoint per key instead (`keys[].config.endpoint`).
  const keyEndpoints =
    config.keys.length > 0 && config.keys.every((key) => typeof key.config?.['endpoint'] === 'string');
  const baseUrl = config.network_config.base_url ?? defaultBaseUrl ?? '';
  if (
    (!baseUrl && !keyEndpoints) ||
    (adapter.capabilities.requiresBaseUrl && !config.network_config.base_url)
  ) {
    throw invalid(
      `provider '${name}': network_config.base_url is required${keyEndpoints ? '' : ' (or config.endpoint on every key)'}`,
    );
  }
  const keys = config.keys.map((key) => ({
    id: key.id ?? '',
    value: resolveSecret(key.value, environment) ?? '',
    weight: key.weight,
    models: key.models,
    config: resolveConfigSecrets(key.config ?? {}, environment),
  }));
  return { name, config, adapter, baseUrl, keys };
}

function restrictOperations(
  adapter: ProviderAdapter,
  allowed: readonly string[] | undefined,
): ProviderAdapter {
  if (!allowed) return adapter;
  return {
    ...adapter,
    capabilities: {
      ...adapter.capabilities,
      operations: adapter.capabilities.operations.filter((operation) => allowed.includes(operation)),
    },
  };
}

/** `env.NAME` strings of a key's config, resolved in memory only (the store keeps the references). */
function resolveConfigSecrets(
  config: Record<string, unknown>,
  environment: NodeJS.ProcessEnv,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([field, value]) => [
      field,
      typeof value === 'string' ? (resolveSecret(value, environment) ?? '') : value,
    ]),
  );
}

function invalid(message: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message });
}

const SECRET_FIELD = /secret|token|password|credential|api_?key|access_key|private/i;

function redactValue(value: string): string {
  if (value === '' || value.startsWith('env.')) return value;
  return value.length > 12 ? `${value.slice(0, 3)}****${value.slice(-4)}` : '****';
}

function redactConfigObject(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([field, value]) => [
      field,
      typeof value === 'string' && SECRET_FIELD.test(field) ? redactValue(value) : value,
    ]),
  );
}

/** The provider config as the admin API shows it: secrets redacted, `env.NAME` references shown. */
export function redactProvider(name: string, config: ProviderConfig): Record<string, unknown> {
  return {
    name,
    ...config,
    keys: config.keys.map((key) => ({
      ...key,
      value: redactValue(key.value),
      ...(key.config ? { config: redactConfigObject(key.config) } : {}),
    })),
  };
}

/**
 * An update that sends back a redacted value (read, edit, write) keeps the stored secret instead of
 * overwriting it with the mask.
 */
export function keepRedactedSecrets(
  incoming: ProviderConfig,
  stored: ProviderConfig | undefined,
): ProviderConfig {
  if (!stored) return incoming;
  const storedById = new Map(stored.keys.map((key) => [key.id, key]));
  return {
    ...incoming,
    keys: incoming.keys.map((key) => {
      const previous = key.id === undefined ? undefined : storedById.get(key.id);
      if (!previous) return key;
      const value = key.value === redactValue(previous.value) ? previous.value : key.value;
      const config =
        key.config && previous.config
          ? Object.fromEntries(
              Object.entries(key.config).map(([field, item]) => {
                const old = previous.config?.[field];
                return [field, typeof old === 'string' && item === redactValue(old) ? old : item];
              }),
            )
          : key.config;
      return { ...key, value, ...(config ? { config } : {}) };
    }),
  };
}

export function isBuiltInProvider(name: string): boolean {
  return BUILT_IN.has(name);
}
