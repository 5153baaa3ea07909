import type { GatewayConfig, LiveSettings, Logger, Metrics } from '@gw/shared';
import { HealthBoard } from '@gw/shared/health';
import { AllowanceStore, RedisStore, type Store } from '@gw/shared/store';
import type { Tracer } from '@gw/shared/tracing';
import { AdmissionCore } from './core/admission-core.ts';
import { GovernanceCore } from './core/governance-core.ts';
import { GovernanceRepository } from './core/governance-repository.ts';
import type { Admission, GovernanceService } from './core/governance-service.ts';
import { migrateOneTagLayout } from './core/one-tag-migration.ts';
import { TracedAdmission, TracedGovernance } from './core/traced-governance.ts';

/** What a composition root hands its caller: the service, closed with everything started for it. */
type Started<Service> = Service & { close(): Promise<void> } & AsyncDisposable;

interface GovernanceOptions {
  config: GatewayConfig;
  /** The live settings: client and governance settings apply to the next request. */
  settings: LiveSettings;
  store: Store;
  logger: Logger;
  /** `gw_cost_usd_total` is counted where requests are settled. */
  metrics?: Metrics | undefined;
  /** Spans of authorize and settle; none when tracing is off. */
  tracer?: Tracer | undefined;
}

/**
 * Provider health as governance weighs a key's provider configs by it: the routers' shared windows, read from
 * the store, so they follow the same health in every process.
 */
async function sharedHealth(options: GovernanceOptions): Promise<HealthBoard> {
  return new HealthBoard({
    config: options.settings.loadBalancer,
    store: options.store,
    share: { replicaId: 'governance', publish: false },
    logger: options.logger,
  }).start();
}

/**
 * On Redis, the move of an earlier release's governance state (counters under one `{gov}` tag) to this one's,
 * run by every process that admits or sweeps before it does (once per Redis: the first moves it, the others
 * wait for it or find it done).
 */
function stateMigration(options: GovernanceOptions) {
  const { store, logger } = options;
  return store instanceof RedisStore
    ? (repository: GovernanceRepository) => migrateOneTagLayout({ store, repository, logger })
    : undefined;
}

/** Closing the answer closes what was started for it, in reverse order of starting. */
function closing(resources: AsyncDisposableStack) {
  const owned = resources.move();
  const close = () => owned.disposeAsync();
  return { close, [Symbol.asyncDispose]: close };
}

/** Governance of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export async function startGovernance(
  options: GovernanceOptions & {
    /** Embedded mode: the router's health board. Without it governance follows the routers' shared windows. */
    health?: HealthBoard;
  },
): Promise<Started<GovernanceService>> {
  await using started = new AsyncDisposableStack();
  const health = options.health ?? started.use(await sharedHealth(options));
  const core = started.use(
    await GovernanceCore.start({
      store: options.store,
      logger: options.logger,
      client: options.settings.client,
      settings: options.settings.governance,
      pricing: options.settings.pricing,
      seed: options.config.governance,
      health,
      metrics: options.metrics,
      migrate: stateMigration(options),
    }),
  );
  const governance: GovernanceService = options.tracer ? new TracedGovernance(core, options.tracer) : core;
  return {
    authorize: governance.authorize.bind(governance),
    settle: governance.settle.bind(governance),
    manage: governance.manage.bind(governance),
    ...closing(started),
  };
}

/**
 * Admission on its own, as a cluster's ingress runs it (docs/architecture.md "Admission"): the governance
 * resources in memory following the store, the admission checks and the reservations of this process. Seeding
 * and the sweeper are the governance service's; every admitting process doing them too would only repeat the
 * same writes.
 */
export async function startAdmission(options: GovernanceOptions): Promise<Started<Admission>> {
  await using started = new AsyncDisposableStack();
  // On Redis this process admits from slices of the counters while they last, off Redis's path
  // (docs/governance.md "Allowances"); what they hold unspent goes back when admission closes (a drain).
  const store =
    options.store instanceof RedisStore
      ? started.use(
          new AllowanceStore({
            store: options.store,
            onError: (error) => options.logger.warn({ err: error }, 'allowances: a slice call failed'),
            onAdmission: (path) => options.metrics?.admissions.inc({ path }),
          }),
        )
      : options.store;
  const health = started.use(await sharedHealth(options));
  const repository = new GovernanceRepository({ store: options.store, logger: options.logger });
  await repository.start();
  started.defer(() => repository.close());
  await stateMigration(options)?.(repository);
  const core = new AdmissionCore({
    store,
    repository,
    client: options.settings.client,
    settings: options.settings.governance,
    pricing: options.settings.pricing,
    health,
    metrics: options.metrics,
    logger: options.logger,
  });
  started.defer(() => core.close());
  const admission: Admission = options.tracer ? new TracedAdmission(core, options.tracer) : core;
  return {
    authorize: admission.authorize.bind(admission),
    settle: admission.settle.bind(admission),
    ...closing(started),
  };
}
