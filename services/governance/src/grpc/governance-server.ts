import type { Server, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { decodeMessage, loadService, toGrpcError, traceOfMetadata } from '@gw/shared/grpc';
import type { TraceContext } from '@gw/shared/tracing';
import type { z } from 'zod';
import {
  authorizeRequestSchema,
  manageRequestSchema,
  settleRequestSchema,
} from '../core/governance-messages.ts';
import type { GovernanceService } from '../core/governance-service.ts';

/** The Governance service of proto/governance.proto (loaded on first use). */
export const governanceGrpcService = () => loadService('governance', 'Governance');

type JsonCall = ServerUnaryCall<{ json: Buffer }, unknown>;

/**
 * A unary JSON call: the request validated (invalid_request otherwise), the answer serialized. The caller's
 * trace context comes from the call's metadata.
 */
function unary<Schema extends z.ZodType>(
  schema: Schema,
  what: string,
  run: (request: z.infer<Schema>, trace: TraceContext | undefined) => Promise<unknown>,
): (call: JsonCall, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    (async () =>
      run(
        decodeMessage(schema, call.request.json, { what, side: 'request' }),
        traceOfMetadata(call.metadata),
      ))().then(
      (result) => callback(null, { json: Buffer.from(JSON.stringify(result ?? null)) }),
      (error) => callback(toGrpcError(error)),
    );
  };
}

/** Adds the Governance service, backed by a GovernanceService core, to a gRPC server. */
export function addGovernanceService(server: Server, core: GovernanceService): void {
  server.addService(governanceGrpcService().service, {
    Authorize: unary(authorizeRequestSchema, 'authorize request', (request, trace) =>
      core.authorize(request, { trace }),
    ),
    Settle: unary(settleRequestSchema, 'settle request', (request, trace) => core.settle(request, { trace })),
    Manage: unary(manageRequestSchema, 'manage request', (request) => core.manage(request)),
  });
}
