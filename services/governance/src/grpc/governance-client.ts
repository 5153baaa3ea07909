import { credentials, type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError, grpcChannel } from '@gw/shared';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  ManageRequest,
  SettleRequest,
} from '../core/governance-service.ts';
import { GovernanceGrpcService } from './governance-server.ts';

type Unary = (
  request: unknown,
  callback: (error: ServiceError | null, value?: { json?: Buffer }) => void,
) => void;

/** GovernanceService over gRPC: the same interface as the core. */
export class GovernanceClient implements GovernanceService {
  private readonly client: InstanceType<typeof GovernanceGrpcService>;

  constructor(address: string) {
    const channel = grpcChannel(address);
    this.client = new GovernanceGrpcService(channel.target, credentials.createInsecure(), channel.options);
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
    const reply = await this.call('Authorize', request);
    return JSON.parse(reply.json!.toString('utf8')) as AuthorizeResult;
  }

  async settle(request: SettleRequest): Promise<void> {
    await this.call('Settle', request);
  }

  async manage(request: ManageRequest): Promise<unknown> {
    const reply = await this.call('Manage', request);
    return JSON.parse(reply.json!.toString('utf8'));
  }

  close(): void {
    this.client.close();
  }
}
