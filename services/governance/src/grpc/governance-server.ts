import type { Server, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { loadService, toGrpcError } from '@gw/shared';
import type {
  AuthorizeRequest,
  GovernanceService,
  ManageRequest,
  SettleRequest,
} from '../core/governance-service.ts';

export const GovernanceGrpcService = loadService('governance', 'Governance');

type JsonCall = ServerUnaryCall<{ json: Buffer }, unknown>;

function decode<T>(call: JsonCall): T {
  return JSON.parse(call.request.json.toString('utf8')) as T;
}

/** Adds the Governance service, backed by a GovernanceService core, to a gRPC server. */
export function addGovernanceService(server: Server, core: GovernanceService): void {
  server.addService(GovernanceGrpcService.service, {
    Authorize: (call: JsonCall, callback: sendUnaryData<unknown>) => {
      core.authorize(decode<AuthorizeRequest>(call)).then(
        (result) => callback(null, { json: Buffer.from(JSON.stringify(result)) }),
        (error) => callback(toGrpcError(error)),
      );
    },
    Settle: (call: JsonCall, callback: sendUnaryData<unknown>) => {
      core.settle(decode<SettleRequest>(call)).then(
        () => callback(null, {}),
        (error) => callback(toGrpcError(error)),
      );
    },
    Manage: (call: JsonCall, callback: sendUnaryData<unknown>) => {
      core.manage(decode<ManageRequest>(call)).then(
        (result) => callback(null, { json: Buffer.from(JSON.stringify(result ?? null)) }),
        (error) => callback(toGrpcError(error)),
      );
    },
  });
}
