import { Client, type ServiceDefinition } from '@grpc/grpc-js';
import type { ClientConfig, Live } from '@gw/shared';
import { GatewayError } from '@gw/shared';
import {
  decodeMessage,
  fromGrpcError,
  type GrpcClientSettings,
  LaneClient,
  ReplicaPool,
  replicaFault,
} from '@gw/shared/grpc';
import type { TraceContext } from '@gw/shared/tracing';
import { authorizeAnonymous } from '../core/anonymous.ts';
import {
  authorizeResultSchema,
  type ManageRequest,
  type ManageResult,
  type ManageResults,
  manageResultSchemas,
  settleResultSchema,
} from '../core/governance-messages.ts';
import type {
  Admission,
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceCallOptions,
  GovernanceService,
  SettleRequest,
  SettleResult,
} from '../core/governance-service.ts';
import { governanceGrpcService } from './governance-server.ts';

/** Every Governance message is one `bytes json` field (proto/governance.proto). */
type JsonMessage = { json?: Buffer };

/** Most time a management call may take, in deadlines: it lists whole collections. */
const MANAGE_DEADLINES = 10;

/**
 * Calls on the wire per governance replica; a burst beyond waits in this client, so a deadline measures a
 * replica's answer and not the queue inside it (an authorization that timed out there was admitted all the
 * same, and counted against its key's request limit unserved). Each is one Redis script: 64 keep a replica
 * busy.
 */
const MAX_IN_FLIGHT_PER_REPLICA = 64;

/**
 * GovernanceService over gRPC: the same interface as the core; what it decodes is validated. Every call has a
 * deadline; one that finds its replica down or frozen is tried once more on another (all three are safe to
 * repeat: a settle applies once per reservation, an authorize that timed out reserved at most what the sweeper
 * releases, management writes are whole-document puts and a merge patch applied twice is applied once; a
 * repeated delete answers not_found).
 */
export class GovernanceClient implements GovernanceService, Admission {
  private readonly replicas: ReplicaPool<Client>;
  /** Authorize and Settle: messages on one stream per replica, not a call each. */
  private readonly lanes: LaneClient<Client, { json: Buffer }>;
  private readonly deadlineMs: number;
  private readonly observe: GrpcClientSettings['observe'];
  private readonly methods: ServiceDefinition;
  private readonly anonymousLocally: Live<ClientConfig> | undefined;

  /**
   * `anonymousLocally`: the client settings, when the caller has them (ingress does): a request without a
   * virtual key is then decided here, without a round trip, by the same function the core uses.
   */
  constructor(settings: GrpcClientSettings, options: { anonymousLocally?: Live<ClientConfig> } = {}) {
    this.anonymousLocally = options.anonymousLocally;
    this.methods = governanceGrpcService().service;
    this.deadlineMs = settings.deadlineMs;
    this.observe = settings.observe;
    this.replicas = new ReplicaPool({
      ...settings,
      maxInFlightPerReplica: MAX_IN_FLIGHT_PER_REPLICA,
      create: (target, credentials, clientOptions) => new Client(target, credentials, clientOptions),
    });
    const lane = this.methods['Lane']!;
    this.lanes = new LaneClient({
      pool: this.replicas,
      open: (client) =>
        client.makeBidiStreamRequest(lane.path, lane.requestSerialize, lane.responseDeserialize),
    });
  }

  /**
   * An Authorize or Settle: a message on a replica's lane (lane-client.ts), inside the pool's window; one that
   * finds its replica down or frozen is tried once more on another (the pool ejected the first).
   */
  private async onLane(
    method: 'Authorize' | 'Settle',
    request: unknown,
    trace: TraceContext | undefined,
  ): Promise<Buffer> {
    const json = Buffer.from(JSON.stringify(request));
    const startedAt = performance.now();
    const once = () => this.lanes.call(method, json, { trace, deadlineMs: this.deadlineMs });
    try {
      const answer = await this.replicas.inWindow(() =>
        once().catch((error: unknown) => {
          if (!replicaFault(error)) throw error;
          return once().catch((retryError: unknown) => {
            // A settle whose first try went unanswered finds its reservation settled on the retry: that first try
            // settled it, its answer lost. The first try's fault goes to the caller, whose own retries take a
            // reservation gone as settled (settle-stage.ts); not_found would say it was never charged.
            const settledByFirstTry =
              method === 'Settle' && retryError instanceof GatewayError && retryError.type === 'not_found';
            throw settledByFirstTry ? error : retryError;
          });
        }),
      );
      return answer.json;
    } catch (error) {
      throw error instanceof GatewayError ? error : fromGrpcError(error);
    } finally {
      this.observe?.(`governance.${method}`, (performance.now() - startedAt) / 1000);
    }
  }

  /** A management call (unary, retried once on another replica when its replica is at fault). */
  private async call(method: 'Manage', request: unknown): Promise<Buffer> {
    const json = Buffer.from(JSON.stringify(request));
    const definition = this.methods[method]!;
    const startedAt = performance.now();
    try {
      return await this.replicas.call(
        (client) =>
          new Promise<Buffer>((resolve, reject) => {
            client.makeUnaryRequest<JsonMessage, JsonMessage>(
              definition.path,
              definition.requestSerialize,
              definition.responseDeserialize,
              { json },
              { deadline: Date.now() + this.deadlineMs * MANAGE_DEADLINES },
              (error, value) => (error ? reject(error) : resolve(value?.json ?? Buffer.alloc(0))),
            );
          }),
        { retry: true },
      );
    } catch (error) {
      throw fromGrpcError(error);
    } finally {
      this.observe?.(`governance.${method}`, (performance.now() - startedAt) / 1000);
    }
  }

  async authorize(request: AuthorizeRequest, options?: GovernanceCallOptions): Promise<AuthorizeResult> {
    if (!request.virtualKey && this.anonymousLocally)
      return authorizeAnonymous(this.anonymousLocally.current(), request);
    const reply = await this.onLane('Authorize', request, options?.trace);
    return decodeMessage(authorizeResultSchema, reply, { what: 'authorization', side: 'reply' });
  }

  async settle(request: SettleRequest, options?: GovernanceCallOptions): Promise<SettleResult> {
    const reply = await this.onLane('Settle', request, options?.trace);
    // A governance from before settle answered its cost replies nothing: the cost is then unknown (0).
    if (reply.length === 0) return { cost: 0 };
    return decodeMessage(settleResultSchema, reply, { what: 'settle answer', side: 'reply' });
  }

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
  async manage(request: ManageRequest): Promise<ManageResult> {
    const reply = await this.call('Manage', request);
    return decodeMessage(manageResultSchemas[request.action], reply, {
      what: `${request.action} answer`,
      side: 'reply',
    });
  }

  /** Governance replicas connected and answering their health checks (the ingress's readiness). */
  servingReplicas(): number {
    return this.replicas.servingCount();
  }

  close(): void {
    this.lanes.close();
    this.replicas.close();
  }
}
