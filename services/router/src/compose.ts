import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  closeOnDispose,
  type GatewayConfig,
  type LiveSettings,
  type Logger,
  type Metrics,
  outboundPolicy,
  secretReferenceRule,
} from '@gw/shared';
import type { HealthBoard } from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import type { Tracer } from '@gw/shared/tracing';
import { type SecretResolver, startSecretResolver } from '@gw/vault';
import { RouterCore } from './core/router-core.ts';
import type { RouterService } from './core/router-service.ts';
import { TracedRouter } from './core/traced-router.ts';

/** The router of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export async function startRouter(options: {
  config: GatewayConfig;
  /** The live settings this process follows (its client settings: raw responses, fallbacks, attempts). */
  settings: LiveSettings;
  store: Store;
  logger: Logger;
  metrics: Metrics;
  /** The process's environment: where `env.NAME` references of provider keys resolve. */
  environment: NodeJS.ProcessEnv;
  /** Embedded mode: the health board shared with governance; without it the router shares through the store. */
  health?: HealthBoard;
  /** Spans of each request and upstream attempt; none when tracing is off. */
  tracer?: Tracer | undefined;
  /**
   * Embedded mode: the process's secret resolver (docs/vault.md), shared with guardrails and admin; without it
   * the router starts its own from the config, following refresh requests through the store.
   */
  secrets?: SecretResolver | undefined;
  /** False in the embedded gateway: no call can be lost between its ingress and router (RouterCore). */
  reportCalls?: boolean | undefined;
}): Promise<RouterService & { close(): Promise<void> } & AsyncDisposable> {
  const secrets =
    options.secrets ??
    (await startSecretResolver({
      config: options.config,
      environment: options.environment,
      logger: options.logger,
      metrics: options.metrics,
      store: options.store,
      scope: 'providers',
    }));
  const core = await RouterCore.start({
    store: options.store,
    logger: options.logger,
    metrics: options.metrics,
    environment: options.environment,
    secrets,
    seedProviders: options.config.providers,
    outbound: outboundPolicy(options.config.network),
    secretReferences: secretReferenceRule(options.config.admin.secret_references),
    client: options.settings.client,
    health: options.health,
    loadBalancer: options.settings.loadBalancer,
    replicaId: `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    tracer: options.tracer,
    reportCalls: options.reportCalls,
  });
  // A resolver this router started is closed with it.
  if (!options.secrets) {
    const close = core.close.bind(core);
    core.close = async () => {
      await close();
      await secrets.close();
    };
  }
  return closeOnDispose(options.tracer ? new TracedRouter(core, options.tracer) : core);
}
