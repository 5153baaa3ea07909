import type {
  Server,
  ServerDuplexStream,
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
} from '@grpc/grpc-js';
import { invalidRequest, parseJson } from '@gw/shared';
import { decodeMessage, toGrpcError } from '@gw/shared/grpc';
import type { CompletionResult, RouterService, Served } from '../core/router-service.ts';
import {
  type JsonMessage,
  type PassthroughFrame,
  routerGrpcService,
  type ServedMessage,
  type StreamReplyMessage,
  writeFrame,
} from './router-proto.ts';
import { completionRouteSchema, embeddingsRouteSchema, passthroughRequestSchema } from './wire-schemas.ts';

/** The caller's pass-through frames: the request head, then the body chunks as they arrive. */
async function servePassthrough(
  call: ServerDuplexStream<PassthroughFrame, PassthroughFrame>,
  core: RouterService,
  signal: AbortSignal,
): Promise<void> {
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
  const answer = await core.passthrough(request, body, { signal });
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

/** A unary call answering a served result, cancelled when the caller cancels. */
function served(
  run: (request: JsonMessage, signal: AbortSignal) => Promise<Served<unknown>>,
): (call: ServerUnaryCall<JsonMessage, ServedMessage>, callback: sendUnaryData<ServedMessage>) => void {
  return (call, callback) => {
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    (async () => run(call.request, abort.signal))().then(
      (result) => {
        const { native } = result as CompletionResult;
        callback(null, {
          json: jsonBytes(result.response, result.json),
          provider: result.provider,
          native: native === undefined ? NONE : Buffer.from(JSON.stringify(native)),
        });
      },
      (error) => callback(toGrpcError(error)),
    );
  };
}

/** Adds the Router service, backed by a RouterService core, to a gRPC server. */
export function addRouterService(server: Server, core: RouterService): void {
  server.addService(routerGrpcService().service, {
    Complete: served((request, signal) =>
      core.complete(decodeMessage(completionRouteSchema, request.json, routeRequest), { signal }),
    ),
    Embed: served((request, signal) =>
      core.embed(decodeMessage(embeddingsRouteSchema, request.json, routeRequest), { signal }),
    ),
    Stream: (call: ServerWritableStream<JsonMessage, StreamReplyMessage>) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      (async () => {
        const request = decodeMessage(completionRouteSchema, call.request.json, routeRequest);
        for await (const item of core.stream(request, { signal: abort.signal })) {
          if (abort.signal.aborted) break;
          const message: StreamReplyMessage = {
            chunk: jsonBytes(item.chunk, item.json),
            provider: item.provider ?? '',
            native: item.native ?? '',
          };
          // Respect back-pressure: wait for the drain of a full buffer before the next chunk.
          if (!call.write(message)) await new Promise((resolve) => call.once('drain', resolve));
        }
      })().then(
        () => call.end(),
        (error) => {
          // grpc-js sends a server stream's error status through the 'error' event.
          if (!abort.signal.aborted) call.emit('error', toGrpcError(error));
        },
      );
    },
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
    PutProvider: unary(async (request: { name: string; json: Buffer; create: boolean }) =>
      json(
        await core.putProvider(request.name, parseJson(request.json), {
          create: request.create,
        }),
      ),
    ),
    DeleteProvider: unary(async (request: { name: string }) => {
      await core.deleteProvider(request.name);
      return json({ deleted: request.name });
    }),
    Health: unary(async () => json(await core.health())),
  });
}
