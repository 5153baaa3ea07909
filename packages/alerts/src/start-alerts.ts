import { type AlertsConfig, closeOnDispose, type Logger, type OutboundPolicy } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { AlertDispatcher, type DispatcherOptions } from './alert-dispatcher.ts';
import { AlertEngine } from './alert-engine.ts';
import type { AlertLease } from './alert-lease.ts';
import { AlertRegistry } from './alert-registry.ts';
import type { AlertRuleKind } from './alert-schemas.ts';
import type { SecretFailureSource } from './alert-sources.ts';
import type { ObservationSources } from './rule-observations.ts';

/** The source each rule kind reads; a kind whose source the process lacks is refused by the API. */
const SOURCE_OF_KIND = {
  budget_threshold: 'budgets',
  provider_health: 'health',
  error_rate: 'logs',
  latency: 'logs',
  guardrail_blocks: 'logs',
  dropped_requests: 'dropped',
  secret_failure: 'secretFailures',
} as const satisfies Record<AlertRuleKind, keyof ObservationSources | 'secretFailures'>;

/** What a rule kind needs, in the words of an error message. */
const SOURCE_NAMES = {
  budgets: 'governance budgets',
  health: 'provider health',
  logs: 'the request log',
  dropped: 'the dropped-request counts',
  secretFailures: 'a secret vault',
} as const;

/**
 * Alerts of one process, as its main composes them: the registry over the store, the dispatcher, and (when
 * `config.enabled`) the evaluator, started. Cluster: the admin process with a RedisLease; embedded: the gateway
 * process with `localLease`.
 */
export function startAlerts(options: {
  store: Store;
  config: AlertsConfig;
  lease: AlertLease;
  sources: ObservationSources;
  secretFailures?: SecretFailureSource | undefined;
  logger?: Logger | undefined;
  /** What became of each notification to a channel: the process's `gw_alert_notifications_total`. */
  onOutcome?: DispatcherOptions['onOutcome'];
  /** The config file's outbound address policy: where channels may send (docs/network.md). */
  outbound: OutboundPolicy;
  /** Where channels' credential references resolve: the process's environment and secret resolver. */
  readSecret?: DispatcherOptions['readSecret'];
}) {
  const { config, logger } = options;
  const registry = new AlertRegistry({
    store: options.store,
    historyLimit: config.history_limit,
    logger,
  });
  const dispatcher = new AlertDispatcher({
    registry,
    logger,
    onOutcome: options.onOutcome,
    outbound: options.outbound,
    readSecret: options.readSecret,
  });
  const engine = config.enabled
    ? new AlertEngine({
        registry,
        dispatcher,
        sources: options.sources,
        secretFailures: options.secretFailures,
        lease: options.lease,
        intervalMs: config.evaluation_interval_ms,
        logger,
      }).start()
    : undefined;
  const available = { ...options.sources, secretFailures: options.secretFailures };
  return closeOnDispose({
    registry,
    dispatcher,
    /** Why a rule of this kind cannot work here, or undefined when it can. */
    unsupported(kind: AlertRuleKind): string | undefined {
      const source = SOURCE_OF_KIND[kind];
      return available[source]
        ? undefined
        : `needs ${SOURCE_NAMES[source]}, which this gateway does not have`;
    },
    async close(): Promise<void> {
      await engine?.close();
      await dispatcher.close();
    },
  });
}
