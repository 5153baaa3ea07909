import type { Server, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { invalidRequest } from '@gw/shared';
import {
  decodeMessage,
  loadService,
  type ServerContext,
  serveLanes,
  toGrpcError,
  traceOfMetadata,
} from '@gw/shared/grpc';
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
export function addGovernanceService(server: Server, core: GovernanceService, context: ServerContext): void {
  const lane = {
    Authorize: async (json: Buffer, trace: TraceContext | undefined) =>
      core.authorize(decodeMessage(authorizeRequestSchema, json, authorizeWhat), { trace }),
    Settle: async (json: Buffer, trace: TraceContext | undefined) =>
      core.settle(decodeMessage(settleRequestSchema, json, settleWhat), { trace }),
  };
  server.addService(governanceGrpcService().service, {
    Authorize: unary(authorizeRequestSchema, authorizeWhat.what, (request, trace) =>
      core.authorize(request, { trace }),
    ),
    Settle: unary(settleRequestSchema, settleWhat.what, (request, trace) => core.settle(request, { trace })),
    Manage: unary(manageRequestSchema, 'manage request', (request) => core.manage(request)),
    Lane: serveLanes<{ json: Buffer }>(async (method, json, { trace }) => {
      if (!Object.hasOwn(lane, method))
        throw invalidRequest(`a lane carries Authorize and Settle calls, not '${method}'`);
      const result = await lane[method as keyof typeof lane](json, trace);
      return { json: Buffer.from(JSON.stringify(result)) };
    }, context.draining),
  });
}

const authorizeWhat = { what: 'authorize request', side: 'request' } as const;
const settleWhat = { what: 'settle request', side: 'request' } as const;
