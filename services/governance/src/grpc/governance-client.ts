import { Client, credentials, type ServiceDefinition } from '@grpc/grpc-js';
import type { ClientConfig } from '@gw/shared';
import { decodeMessage, fromGrpcError, grpcChannel } from '@gw/shared/grpc';
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

/** GovernanceService over gRPC: the same interface as the core; what it decodes is validated. */
export class GovernanceClient implements GovernanceService {
  private readonly client: Client;
  private readonly methods: ServiceDefinition;
  private readonly anonymousLocally: ClientConfig | undefined;

  /**
   * `anonymousLocally`: the client settings, when the caller has them (ingress does): a request without a
   * virtual key is then decided here, without a round trip, by the same function the core uses.
   */
  constructor(address: string, options: { anonymousLocally?: ClientConfig } = {}) {
    this.anonymousLocally = options.anonymousLocally;
    const channel = grpcChannel(address);
    this.methods = governanceGrpcService().service;
    this.client = new Client(channel.target, credentials.createInsecure(), channel.options);
  }

  private call(method: 'Authorize' | 'Settle' | 'Manage', request: unknown): Promise<Buffer> {
    const definition = this.methods[method]!;
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest<JsonMessage, JsonMessage>(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        { json: Buffer.from(JSON.stringify(request)) },
        (error, value) => {
          if (error) reject(fromGrpcError(error));
          else resolve(value?.json ?? Buffer.alloc(0));
        },
      );
    });
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
    this.client.close();
  }
}
