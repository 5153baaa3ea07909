import { type GatewayConfig, type Logger, type Metrics, parseSecretReference } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { AwsSecretsManagerBackend } from './backends/aws-secrets-manager.ts';
import { AzureKeyVaultBackend } from './backends/azure-key-vault.ts';
import { GcpSecretManagerBackend, type GoogleTokenSource } from './backends/gcp-secret-manager.ts';
import { HashicorpVaultBackend } from './backends/hashicorp-vault.ts';
import { forwardSecretFailures } from './secret-failure-relay.ts';
import { SecretResolver } from './secret-resolver.ts';

/** Which references a process reads: only those it uses (a router never holds guardrail credentials). */
type ReferenceScope = 'providers' | 'guardrails' | 'all';

/** Where `POST /api/vault/refresh` reaches every process of a cluster. */
const REFRESH_CHANNEL = 'vault.refresh';

/** Asks every resolver following `store` to read its references again now. */
export function publishVaultRefresh(store: Store): Promise<void> {
  return store.publish(REFRESH_CHANNEL, 'refresh');
}

/** Every secret-manager reference of a config: provider keys and key settings, guardrail credentials. */
function collectSecretReferences(
  config: Pick<GatewayConfig, 'providers' | 'guardrails'>,
  scope: ReferenceScope = 'all',
): string[] {
  const found = new Set<string>();
  const visit = (value: unknown) => {
    if (typeof value === 'string') {
      const reference = parseSecretReference(value);
      if (reference && !(reference instanceof Error)) found.add(value);
    } else if (value && typeof value === 'object') {
      for (const item of Object.values(value)) visit(item);
    }
  };
  if (scope !== 'guardrails') visit(config.providers);
  if (scope !== 'providers') visit(config.guardrails.profiles);
  return [...found];
}

/**
 * The secret resolver of a process (each process that uses secrets has its own): its backends from the config's
 * `vault` section, every reference of the config read before it returns (a reference that cannot be read fails
 * start-up, named), then refreshed on `vault.refresh_interval_seconds`.
 */
export async function startSecretResolver(options: {
  config: Pick<GatewayConfig, 'providers' | 'guardrails' | 'vault'>;
  /** The process's environment, injected by main (AWS region, Azure workload identity). */
  environment: NodeJS.ProcessEnv;
  logger: Logger;
  metrics?: Pick<Metrics, 'vaultRefreshFailures'> | undefined;
  /** The references this process reads (all of them by default). */
  scope?: ReferenceScope | undefined;
  /** Cluster mode: refresh requests of the admin API arrive through it (publishVaultRefresh). */
  store?: Store | undefined;
  /** Tests: a Google token instead of application default credentials. */
  googleTokenSource?: GoogleTokenSource | undefined;
}): Promise<SecretResolver> {
  const { vault } = options.config;
  const timeoutMs = vault.request_timeout_ms;
  const resolver = new SecretResolver({
    logger: options.logger,
    metrics: options.metrics,
    refreshIntervalMs: vault.refresh_interval_seconds * 1000,
    backends: {
      ...(vault.hashicorp && { vault: new HashicorpVaultBackend({ config: vault.hashicorp, timeoutMs }) }),
      'aws-sm': new AwsSecretsManagerBackend({
        config: vault.aws_secrets_manager,
        environment: options.environment,
        timeoutMs,
      }),
      'gcp-sm': new GcpSecretManagerBackend({
        config: vault.gcp_secret_manager,
        timeoutMs,
        tokenSource: options.googleTokenSource,
      }),
      'azure-kv': new AzureKeyVaultBackend({
        config: vault.azure_key_vault,
        environment: options.environment,
        timeoutMs,
      }),
    },
  });
  const references = collectSecretReferences(options.config, options.scope);
  await resolver.start(references);
  // Nothing to refresh, nothing to follow (most gateways: no startup cost).
  if (options.store && references.length > 0) {
    const unsubscribe = await options.store.subscribe(REFRESH_CHANNEL, () => {
      resolver.refresh().catch(() => {});
    });
    resolver.onClose(unsubscribe);
    // The alert evaluator runs in one admin replica; failures happen wherever a secret is read.
    const stopForwarding = forwardSecretFailures(resolver, options.store, (error) =>
      options.logger.warn({ err: error }, 'vault: a failure notice was not published'),
    );
    resolver.onClose(async () => stopForwarding());
  }
  return resolver;
}
