import { credentials, type ServiceError } from '@grpc/grpc-js';
import type { ClientConfig } from '@gw/shared';
import { decodeMessage, fromGrpcError, grpcChannel } from '@gw/shared/grpc';
import { z } from 'zod';
import { authorizeAnonymous } from '../core/anonymous.ts';
import { authorizeResultSchema } from '../core/governance-messages.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  ManageRequest,
  SettleRequest,
} from '../core/governance-service.ts';
import { governanceGrpcService } from './governance-server.ts';

type Unary = (
  request: unknown,
  callback: (error: ServiceError | null, value?: { json?: Buffer }) => void,
) => void;

/** GovernanceService over gRPC: the same interface as the core. */
export class GovernanceClient implements GovernanceService {
  private readonly client: InstanceType<ReturnType<typeof governanceGrpcService>>;

  private readonly anonymousLocally: ClientConfig | undefined;

  /**
   * `anonymousLocally`: the client settings, when the caller has them (ingress does): a request without a
   * virtual key is then decided here, without a round trip, by the same function the core uses.
   */
  constructor(address: string, options: { anonymousLocally?: ClientConfig } = {}) {
    this.anonymousLocally = options.anonymousLocally;
    const channel = grpcChannel(address);
    const Service = governanceGrpcService();
    this.client = new Service(channel.target, credentials.createInsecure(), channel.options);
  }

  private call(method: 'Authorize' | 'Settle' | 'Manage', request: unknown): Promise<{ json?: Buffer }> {
    return new Promise((resolve, reject) => {
      const invoke = (this.client as unknown as Record<string, Unary>)[method]!.bind(this.client);
      invoke({ json: Buffer.from(JSON.stringify(request)) }, (error, value) => {
        if (error) reject(fromGrpcError(error));
        else resolve(value ?? {});
      });
    });
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    if (!request.virtualKey && this.anonymousLocally)
      return authorizeAnonymous(this.anonymousLocally, request);
    const reply = await this.call('Authorize', request);
    return decodeMessage(authorizeResultSchema, reply.json ?? Buffer.alloc(0), {
      what: 'authorization',
      side: 'reply',
    });
  }

  async settle(request: SettleRequest): Promise<void> {
    await this.call('Settle', request);
  }

  async manage(request: ManageRequest): Promise<unknown> {
    const reply = await this.call('Manage', request);
    return decodeMessage(z.unknown(), reply.json ?? Buffer.alloc(0), {
      what: 'management answer',
      side: 'reply',
    });
  }

  close(): void {
    this.client.close();
  }
}
