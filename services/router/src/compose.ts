import type { GatewayConfig, Logger, Metrics } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { RouterCore } from './core/router-core.ts';

/** The router of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function startRouter(options: {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  metrics: Metrics;
  /** The process's environment: where `env.NAME` references of provider keys resolve. */
  environment: NodeJS.ProcessEnv;
}): Promise<RouterCore> {
  return RouterCore.start({
    store: options.store,
    logger: options.logger,
    metrics: options.metrics,
    environment: options.environment,
    seedProviders: options.config.providers,
    sendRawResponse: options.config.client.send_raw_response,
    limits: {
      maxFallbacks: options.config.client.max_fallbacks,
      maxAttempts: options.config.client.max_attempts,
    },
  });
}
