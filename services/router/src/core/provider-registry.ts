import {
  fieldTree,
  GatewayError,
  keepStoredSecrets,
  looksLikeSecretReference,
  maskSecrets,
  PROVIDER_NAMES,
  type ProviderConfig,
  type ProviderView,
  providerConfigSchema,
  resolveSecret,
  type SecretLookup,
  secretValues,
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

/**
 * Gives every key a stable id: the configured one, or `<provider>-key-<index>` (the next free number when
 * another key already has that id: a key added after one was removed must not take a remaining key's id).
 */
export function withKeyIds(name: string, config: ProviderConfig): ProviderConfig {
  const taken = new Set(config.keys.flatMap((key) => (key.id === undefined ? [] : [key.id])));
  return {
    ...config,
    keys: config.keys.map((key, index) => {
      if (key.id !== undefined) return key;
      let number = index;
      while (taken.has(`${name}-key-${number}`)) number++;
      const id = `${name}-key-${number}`;
      taken.add(id);
      return { ...key, id };
    }),
  };
}

/** Key ids are what virtual keys' `key_ids` and health reports name: two keys may not share one. */
function assertUniqueKeyIds(name: string, config: ProviderConfig): void {
  const seen = new Set<string>();
  for (const [index, key] of config.keys.entries()) {
    if (key.id === undefined) continue;
    if (seen.has(key.id)) {
      throw new GatewayError({
        type: 'invalid_request',
        message: `provider '${name}': keys[${index}].id: '${key.id}' is the id of another key`,
        param: `keys[${index}].id`,
      });
    }
    seen.add(key.id);
  }
}

/** Where the secret references of provider keys resolve. */
export interface SecretSources {
  /** `env.NAME`: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
  /** `vault.…`, `aws-sm.…`, `gcp-sm.…`, `azure-kv.…`: the process's secret resolver (@gw/vault), read at use. */
  secrets?: SecretLookup | undefined;
}

/**
 * A provider config as the router uses it (errors are 400s naming the problem): validated, its adapter and base
 * URL chosen, its keys' `env.NAME` references resolved (the store keeps the references). Secret-manager
 * references stay lookups in the resolver's memory, made at each use, so a rotated secret serves the next request.
 */
export function loadProvider(name: string, input: unknown, sources: SecretSources): LoadedProvider {
  const parsed = providerConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError({
      type: 'invalid_request',
      message: `provider '${name}': ${issue?.path.join('.') || 'config'}: ${issue?.message ?? 'invalid'}`,
      param: issue?.path.join('.') ?? null,
    });
  }
  assertUniqueKeyIds(name, parsed.data);
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
  const keys = config.keys.map((key) =>
    withSecretFields(
      {
        id: key.id ?? '',
        weight: key.weight,
        models: key.models,
        rpmLimit: key.rpm_limit,
        tpmLimit: key.tpm_limit,
        config: resolveConfigSecrets(key.config ?? {}, sources),
      },
      { value: key.value },
      sources,
    ),
  );
  return {
    name,
    config,
    adapter,
    baseUrl,
    keys,
    // Read on the error path only, and current after a rotation.
    get secrets() {
      return providerSecrets(keys, config);
    },
  };
}

/**
 * `target` with `fields` resolved: plain values and `env.NAME` once, secret-manager references as getters that
 * read the resolver's memory (a property, so every reader, copies at use included, sees the current value).
 */
function withSecretFields<T extends object, F extends string>(
  target: T,
  fields: Record<F, string>,
  sources: SecretSources,
): T & Record<F, string> {
  for (const [field, value] of Object.entries<string>(fields)) {
    if (looksLikeSecretReference(value)) {
      Object.defineProperty(target, field, {
        enumerable: true,
        get: () => resolveSecret(value, sources.environment, sources.secrets) ?? '',
      });
    } else {
      (target as Record<string, string>)[field] = resolveSecret(value, sources.environment) ?? '';
    }
  }
  return target as T & Record<F, string>;
}

/**
 * The credentials of a provider as its keys resolve them (what the schema declares: key values, credential
 * settings of keys), and the values of every extra header (an operator's custom auth header may have any name;
 * taking a harmless value out of an error costs nothing).
 */
function providerSecrets(keys: SelectableKey[], config: ProviderConfig): string[] {
  const resolved = { keys: keys.map((key) => ({ value: key.value, config: key.config })) };
  return [
    ...secretValues(fieldTree(providerConfigSchema), resolved),
    ...Object.values(config.network_config.extra_headers),
  ].filter((secret) => secret.length >= 8);
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

/** Secret references of a key's config, resolved in memory only (the store keeps the references). */
function resolveConfigSecrets(
  config: Record<string, unknown>,
  sources: SecretSources,
): Record<string, unknown> {
  const strings = Object.fromEntries(
    Object.entries(config).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const others = Object.fromEntries(Object.entries(config).filter(([, value]) => typeof value !== 'string'));
  return withSecretFields(others, strings, sources);
}

function invalid(message: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message });
}

/** The provider config as the admin API shows it: credentials masked, references shown as written. */
export function redactProvider(name: string, config: ProviderConfig): ProviderView {
  return { name, ...maskSecrets(fieldTree(providerConfigSchema), config) };
}

/**
 * An update that sends back a masked value (read, edit, write) keeps the stored secret instead of overwriting
 * it with the mask (keys paired by id).
 */
export function keepRedactedSecrets(
  incoming: ProviderConfig,
  stored: ProviderConfig | undefined,
): ProviderConfig {
  return keepStoredSecrets(fieldTree(providerConfigSchema), incoming, stored);
}

export function isBuiltInProvider(name: string): boolean {
  return BUILT_IN.has(name);
}
