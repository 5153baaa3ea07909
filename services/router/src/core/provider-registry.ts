import {
  GatewayError,
  maskSecret,
  maskSecretFields,
  PROVIDER_NAMES,
  type ProviderConfig,
  providerConfigSchema,
  resolveSecret,
  SECRET_FIELD,
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
  /** Every credential of the provider as sent upstream: never relayed back or logged (upstream errors echo them). */
  secrets: string[];
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
    adapter = withoutResponsesApi(
      restrictOperations(BASE_FORMAT_ADAPTERS[custom.base_provider], custom.allowed_operations),
    );
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
  return { name, config, adapter, baseUrl, keys, secrets: providerSecrets(keys, config) };
}

/**
 * Key values, credential fields of key settings (any depth: JSON credentials), and the values of every extra
 * header (an operator's custom auth header may have any name; taking a harmless value out of an error costs
 * nothing).
 */
function providerSecrets(keys: SelectableKey[], config: ProviderConfig): string[] {
  const secrets: string[] = [];
  const collect = (value: unknown, field: string) => {
    if (typeof value === 'string' && SECRET_FIELD.test(field)) secrets.push(value);
    else if (value && typeof value === 'object') {
      for (const [inner, item] of Object.entries(value)) collect(item, inner);
    }
  };
  for (const key of keys) {
    if (key.value) secrets.push(key.value);
    collect(key.config, '');
  }
  secrets.push(...Object.values(config.network_config.extra_headers));
  return secrets.filter((secret) => secret.length >= 8);
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

/**
 * A custom provider on OpenAI's format is an OpenAI-compatible server, which may not serve OpenAI's
 * Responses API: Responses requests reach it translated to chat.
 */
function withoutResponsesApi(adapter: ProviderAdapter): ProviderAdapter {
  if (adapter.nativeFormat?.('') !== 'openai-responses') return adapter;
  const { nativeFormat: _format, nativeChat: _chat, nativeChatStream: _stream, ...translated } = adapter;
  return translated;
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

/** The provider config as the admin API shows it: secrets redacted, `env.NAME` references shown. */
export function redactProvider(name: string, config: ProviderConfig): Record<string, unknown> {
  return {
    name,
    ...config,
    // Custom auth headers (`authorization`, `x-api-key`…) are credentials too.
    network_config: {
      ...config.network_config,
      extra_headers: maskSecretFields(config.network_config.extra_headers),
    },
    keys: config.keys.map((key) => ({
      ...key,
      value: maskSecret(key.value),
      ...(key.config ? { config: maskSecretFields(key.config) } : {}),
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
  const storedHeaders = stored.network_config.extra_headers;
  return {
    ...incoming,
    network_config: {
      ...incoming.network_config,
      extra_headers: Object.fromEntries(
        Object.entries(incoming.network_config.extra_headers).map(([header, value]) => {
          const old = storedHeaders[header];
          return [header, old !== undefined && value === maskSecret(old) ? old : value];
        }),
      ),
    },
    keys: incoming.keys.map((key) => {
      const previous = key.id === undefined ? undefined : storedById.get(key.id);
      if (!previous) return key;
      const value = key.value === maskSecret(previous.value) ? previous.value : key.value;
      const config =
        key.config && previous.config
          ? Object.fromEntries(
              Object.entries(key.config).map(([field, item]) => {
                const old = previous.config?.[field];
                return [field, typeof old === 'string' && item === maskSecret(old) ? old : item];
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
