import type { Server, ServerDuplexStream, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { invalidRequest, parseJson } from '@gw/shared';
import { decodeMessage, type ServerContext, serveLanes, toGrpcError, traceOfMetadata } from '@gw/shared/grpc';
import type { TraceContext } from '@gw/shared/tracing';
import type { CompletionResult, RouterService, Served } from '../core/router-service.ts';
import {
  type JsonMessage,
  type PassthroughFrame,
  routerGrpcService,
  type ServedMessage,
  type StreamReplyMessage,
  writeFrame,
} from './router-proto.ts';
import {
  completionRouteSchema,
  embeddingsRouteSchema,
  passthroughRequestSchema,
  providerPatchSchema,
} from './wire-schemas.ts';

/** The caller's pass-through frames: the request head, then the body chunks as they arrive. */
async function servePassthrough(
  call: ServerDuplexStream<PassthroughFrame, PassthroughFrame>,
  core: RouterService,
  signal: AbortSignal,
): Promise<void> {
  const trace = traceOfMetadata(call.metadata);
  const frames = call[Symbol.asyncIterator]() as AsyncIterator<PassthroughFrame>;
  const first = await frames.next();
  if (first.done || first.value.head.length === 0) throw invalidRequest('pass-through: no request head');
  const request = decodeMessage(passthroughRequestSchema, first.value.head, {
    what: 'pass-through head',
    side: 'request',
  });
  const body = request.hasBody
    ? (async function* () {
        for (let next = await frames.next(); !next.done; next = await frames.next()) {
          if (next.value.chunk.length > 0) yield next.value.chunk;
        }
      })()
    : undefined;
  const answer = await core.passthrough(request, body, { signal, trace });
  await writeFrame(call, {
    head: Buffer.from(JSON.stringify({ status: answer.status, headers: answer.headers })),
  });
  for await (const chunk of answer.body) {
    if (signal.aborted) return;
    await writeFrame(call, { chunk: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) });
  }
}

/** A unary call answering JSON (provider configs, health). */
function unary<Request>(
  run: (request: Request) => Promise<JsonMessage>,
): (call: ServerUnaryCall<Request, JsonMessage>, callback: sendUnaryData<JsonMessage>) => void {
  return (call, callback) => {
    run(call.request).then(
      (result) => callback(null, result),
      (error) => callback(toGrpcError(error)),
    );
  };
}

const json = (value: unknown): JsonMessage => ({ json: Buffer.from(JSON.stringify(value ?? null)) });

const NONE = Buffer.alloc(0);

const routeRequest = { what: 'route request', side: 'request' } as const;

/** A value's JSON bytes: the text the service already holds when it has it (`json`), else serialized here. */
const jsonBytes = (value: unknown, json: string | undefined) => Buffer.from(json ?? JSON.stringify(value));

/** A served result as its message. */
function servedMessage(result: Served<unknown>): ServedMessage {
  const { native } = result as CompletionResult;
  return {
    json: jsonBytes(result.response, result.json),
    provider: result.provider,
    native: native === undefined ? NONE : Buffer.from(JSON.stringify(native)),
    fallback_index: result.servedBy?.fallbackIndex ?? 0,
    key_id: result.servedBy?.keyId ?? '',
    failed_before: result.servedBy?.failedBefore ?? [],
  };
}

/** A Stream call's messages: the route's JSON in, a message per chunk out. */
async function* streamMessages(
  core: RouterService,
  json: Buffer,
  options: { signal: AbortSignal; trace: TraceContext | undefined },
): AsyncGenerator<StreamReplyMessage> {
  const request = decodeMessage(completionRouteSchema, json, routeRequest);
  for await (const item of core.stream(request, options)) {
    yield {
      chunk: jsonBytes(item.chunk, item.json),
      provider: item.provider ?? '',
      native: item.native ?? '',
      relays_native: item.native !== undefined,
      fallback_index: item.servedBy?.fallbackIndex ?? 0,
      key_id: item.servedBy?.keyId ?? '',
      failed_before: item.servedBy?.failedBefore ?? [],
    };
  }
}

/** Adds the Router service, backed by a RouterService core, to a gRPC server. */
export function addRouterService(server: Server, core: RouterService, context: ServerContext): void {
  server.addService(routerGrpcService().service, {
    Lane: serveLanes<ServedMessage, StreamReplyMessage>({
      draining: context.draining,
      calls: {
        Complete: async (json, options) =>
          servedMessage(
            await core.complete(decodeMessage(completionRouteSchema, json, routeRequest), options),
          ),
        Embed: async (json, options) =>
          servedMessage(await core.embed(decodeMessage(embeddingsRouteSchema, json, routeRequest), options)),
      },
      streams: { Stream: (json, options) => streamMessages(core, json, options) },
    }),
    Passthrough: (call: ServerDuplexStream<PassthroughFrame, PassthroughFrame>) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      servePassthrough(call, core, abort.signal).then(
        () => call.end(),
        (error) => {
          if (!abort.signal.aborted) call.emit('error', toGrpcError(error));
        },
      );
    },
    ListProviders: unary(async () => json(await core.listProviders())),
    GetProvider: unary(async (request: { name: string }) => json(await core.getProvider(request.name))),
    PutProvider: unary(
      async (request: { name: string; json: Buffer; create: boolean; allow_secret_references: boolean }) =>
        json(
          await core.putProvider(request.name, parseJson(request.json), {
            create: request.create,
            allowSecretReferences: request.allow_secret_references,
          }),
        ),
    ),
    PatchProvider: unary(async (request: { name: string; json: Buffer; allow_secret_references: boolean }) =>
      json(
        await core.patchProvider(
          request.name,
          decodeMessage(providerPatchSchema, request.json, { what: 'provider patch', side: 'request' }),
          { allowSecretReferences: request.allow_secret_references },
        ),
      ),
    ),
    DeleteProvider: unary(async (request: { name: string }) => {
      await core.deleteProvider(request.name);
      return json({ deleted: request.name });
    }),
    Health: unary(async () => json(await core.health())),
  });
}
