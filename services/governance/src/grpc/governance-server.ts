import type { Server, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { decodeMessage, loadService, type ServerContext, serveLanes, toGrpcError } from '@gw/shared/grpc';
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

/** A unary JSON call: the request validated (invalid_request otherwise), the answer serialized. */
function unary<Schema extends z.ZodType>(
  schema: Schema,
  what: string,
  run: (request: z.infer<Schema>) => Promise<unknown>,
): (call: JsonCall, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    (async () => run(decodeMessage(schema, call.request.json, { what, side: 'request' })))().then(
      (result) => callback(null, { json: Buffer.from(JSON.stringify(result ?? null)) }),
      (error) => callback(toGrpcError(error)),
    );
  };
}

/** Adds the Governance service, backed by a GovernanceService core, to a gRPC server. */
export function addGovernanceService(server: Server, core: GovernanceService, context: ServerContext): void {
  server.addService(governanceGrpcService().service, {
    Lane: serveLanes<{ json: Buffer }>({
      draining: context.draining,
      calls: {
        Authorize: async (json, { trace }) =>
          jsonAnswer(
            await core.authorize(decodeMessage(authorizeRequestSchema, json, authorizeWhat), { trace }),
          ),
        Settle: async (json, { trace }) =>
          jsonAnswer(await core.settle(decodeMessage(settleRequestSchema, json, settleWhat), { trace })),
      },
    }),
    Manage: unary(manageRequestSchema, 'manage request', (request) => core.manage(request)),
  });
}

const jsonAnswer = (result: unknown) => ({ json: Buffer.from(JSON.stringify(result)) });
const authorizeWhat = { what: 'authorize request', side: 'request' } as const;
const settleWhat = { what: 'settle request', side: 'request' } as const;
