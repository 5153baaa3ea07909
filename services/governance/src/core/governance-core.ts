import type { GatewayConfig, Logger } from '@gw/shared';
import { AdmissionCore, type AdmissionCoreDependencies } from './admission-core.ts';
import type { ManageRequest, ManageResult, ManageResults } from './governance-messages.ts';
import { GovernanceRepository } from './governance-repository.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  SettleRequest,
  SettleResult,
} from './governance-service.ts';
import { manageResources } from './management.ts';
import { ResourceWrites } from './resource-writes.ts';
import { seedGovernance } from './seeding.ts';
import { sweepUnsettled } from './settlement.ts';

export interface GovernanceCoreDependencies extends Omit<AdmissionCoreDependencies, 'repository'> {
  logger: Logger;
  /** The config file's governance resources, written to the store at start and again if it loses them. */
  seed?: GatewayConfig['governance'] | undefined;
  /**
   * Run once the resources are loaded and seeded, before the core admits or sweeps: on Redis, the move of an
   * earlier release's governance state (one-tag-migration.ts).
   */
  migrate?: ((repository: GovernanceRepository) => Promise<void>) | undefined;
}

/**
 * Governance core: admission (admission-core.ts), the management API, seeding the config file's resources,
 * and the sweeper that charges reservations whose settle never came.
 */
export class GovernanceCore implements GovernanceService {
  private readonly dependencies: GovernanceCoreDependencies;
  private readonly repository: GovernanceRepository;
  private readonly writes: ResourceWrites;
  private readonly admission: AdmissionCore;
  private readonly now: () => number;
  private sweepTimer: NodeJS.Timeout | undefined;

  private constructor(dependencies: GovernanceCoreDependencies) {
    this.dependencies = dependencies;
    this.now = dependencies.now ?? Date.now;
    this.repository = new GovernanceRepository({ store: dependencies.store, logger: dependencies.logger });
    this.writes = new ResourceWrites({ repository: this.repository, now: this.now });
    this.admission = new AdmissionCore({ ...dependencies, repository: this.repository });
  }

  static async start(dependencies: GovernanceCoreDependencies): Promise<GovernanceCore> {
    const core = new GovernanceCore(dependencies);
    await core.repository.start({ reseed: () => core.recover() });
    await core.seed();
    await dependencies.migrate?.(core.repository);
    // Restart-only (its schema says): the sweeper's timer is set once.
    const { sweep_interval_ms: sweepIntervalMs } = dependencies.settings.current();
    if (sweepIntervalMs > 0) {
      core.sweepTimer = setInterval(() => {
        core.sweep().catch((error) => dependencies.logger.error({ err: error }, 'settlement sweep failed'));
      }, sweepIntervalMs);
      core.sweepTimer.unref();
    }
    return core;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.admission.close();
    await this.repository.close();
  }

  authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    return this.admission.authorize(request);
  }

  settle(request: SettleRequest): Promise<SettleResult> {
    return this.admission.settle(request);
  }

  /**
   * Charges reservations whose Settle never came (a process died mid-request, or its ingress lost the call to
   * its router) from what the routers reported of their calls, at their estimate when none did.
   */
  sweep(): Promise<number> {
    return sweepUnsettled({
      store: this.dependencies.store,
      logger: this.dependencies.logger,
      now: this.now(),
      settle: (request) => this.settle(request),
    });
  }

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
  manage(request: ManageRequest): Promise<ManageResult> {
    return manageResources(
      {
        repository: this.repository,
        writes: this.writes,
        store: this.dependencies.store,
        now: this.now,
        dryRun: (body) => this.admission.dryRun(body),
      },
      request,
    );
  }

  /**
   * The store lost its data: what this replica holds is written back first (the admin API's resources), then
   * the config file's resources over it, as at a start.
   */
  private async recover(): Promise<void> {
    const restored = await this.repository.restore();
    // The loss itself is logged as an error by the change follower; this says what came back.
    this.dependencies.logger.info(
      { restored },
      `governance: wrote back ${restored} resources this replica held to the store that lost them; spend ` +
        'counters and open reservations are not restored',
    );
    await this.seed();
  }

  private async seed(): Promise<void> {
    if (this.dependencies.seed) await seedGovernance(this.writes, this.dependencies.seed);
  }
}
