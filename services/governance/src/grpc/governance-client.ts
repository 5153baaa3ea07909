import { Client, type ServiceDefinition } from '@grpc/grpc-js';
import type { ClientConfig } from '@gw/shared';
import { decodeMessage, fromGrpcError, type GrpcClientSettings, ReplicaPool } from '@gw/shared/grpc';
import { authorizeAnonymous } from '../core/anonymous.ts';
import {
  authorizeResultSchema,
  type ManageRequest,
  type ManageResult,
  type ManageResults,
  manageResultSchemas,
} from '../core/governance-messages.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  SettleRequest,
} from '../core/governance-service.ts';
import { governanceGrpcService } from './governance-server.ts';

/** Every Governance message is one `bytes json` field (proto/governance.proto). */
type JsonMessage = { json?: Buffer };

/**
 * Most deadlines a call may take, in deadlines: one for the hot calls; management lists whole collections.
 */
const DEADLINES = { Authorize: 1, Settle: 1, Manage: 10 } as const;

/**
 * GovernanceService over gRPC: the same interface as the core; what it decodes is validated. Every call has a
 * deadline; one that finds its replica down or frozen is tried once more on another (all three are safe to
 * repeat: a settle applies once per reservation, an authorize that timed out reserved at most what the sweeper
 * releases, and management writes are whole-document puts).
 */
export class GovernanceClient implements GovernanceService {
  private readonly replicas: ReplicaPool<Client>;
  private readonly deadlineMs: number;
  private readonly methods: ServiceDefinition;
  private readonly anonymousLocally: ClientConfig | undefined;

  /**
   * `anonymousLocally`: the client settings, when the caller has them (ingress does): a request without a
   * virtual key is then decided here, without a round trip, by the same function the core uses.
   */
  constructor(settings: GrpcClientSettings, options: { anonymousLocally?: ClientConfig } = {}) {
    this.anonymousLocally = options.anonymousLocally;
    this.methods = governanceGrpcService().service;
    this.deadlineMs = settings.deadlineMs;
    this.replicas = new ReplicaPool({
      ...settings,
      create: (target, credentials, clientOptions) => new Client(target, credentials, clientOptions),
    });
  }

  private async call(method: keyof typeof DEADLINES, request: unknown): Promise<Buffer> {
    const definition = this.methods[method]!;
    const message = { json: Buffer.from(JSON.stringify(request)) };
    try {
      return await this.replicas.call(
        (client) =>
          new Promise<Buffer>((resolve, reject) => {
            client.makeUnaryRequest<JsonMessage, JsonMessage>(
              definition.path,
              definition.requestSerialize,
              definition.responseDeserialize,
              message,
              { deadline: Date.now() + this.deadlineMs * DEADLINES[method] },
              (error, value) => (error ? reject(error) : resolve(value?.json ?? Buffer.alloc(0))),
            );
          }),
        { retry: true },
      );
    } catch (error) {
      throw fromGrpcError(error);
    }
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    if (!request.virtualKey && this.anonymousLocally)
      return authorizeAnonymous(this.anonymousLocally, request);
    const reply = await this.call('Authorize', request);
    return decodeMessage(authorizeResultSchema, reply, { what: 'authorization', side: 'reply' });
  }

  async settle(request: SettleRequest): Promise<void> {
    await this.call('Settle', request);
  }

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
  async manage(request: ManageRequest): Promise<ManageResult> {
    const reply = await this.call('Manage', request);
    return decodeMessage(manageResultSchemas[request.action], reply, {
      what: `${request.action} answer`,
      side: 'reply',
    });
  }

  close(): void {
    this.replicas.close();
  }
}
