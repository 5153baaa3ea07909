import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { loadService, toGrpcError, type Usage } from '@gw/shared';
import type { RouteRequest, RouterService } from '../core/router-service.ts';

export const RouterGrpcService = loadService('router', 'Router');

interface JsonMessage {
  json: Buffer;
}

function toWireUsage(usage: Usage) {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
    cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

function unary<Request, Result>(
  run: (request: Request) => Promise<Result>,
): (call: ServerUnaryCall<Request, unknown>, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    run(call.request).then(
      (result) => callback(null, result),
      (error) => callback(toGrpcError(error)),
    );
  };
}

const json = (value: unknown) => ({ json: Buffer.from(JSON.stringify(value ?? null)) });

/** Adds the Router service, backed by a RouterService core, to a gRPC server. */
export function addRouterService(server: Server, core: RouterService): void {
  server.addService(RouterGrpcService.service, {
    Complete: (call: ServerUnaryCall<JsonMessage, unknown>, callback: sendUnaryData<unknown>) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      const request = JSON.parse(call.request.json.toString('utf8')) as RouteRequest;
      core.complete(request, { signal: abort.signal }).then(
        (result) =>
          callback(null, {
            body: Buffer.from(result.body),
            provider: result.provider,
            model: result.model,
            usage: toWireUsage(result.usage),
          }),
        (error) => callback(toGrpcError(error)),
      );
    },
    Stream: (call: ServerWritableStream<JsonMessage, unknown>) => {
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      const request = JSON.parse(call.request.json.toString('utf8')) as RouteRequest;
      (async () => {
        for await (const item of core.stream(request, { signal: abort.signal })) {
          if (abort.signal.aborted) break;
          const message = {
            chunk: Buffer.from(item.chunk),
            provider: item.provider ?? '',
            model: item.model ?? '',
            usage: item.usage ? toWireUsage(item.usage) : undefined,
            has_usage: item.usage !== undefined,
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
    ListProviders: unary(async () => json(await core.listProviders())),
    GetProvider: unary(async (request: { name: string }) => json(await core.getProvider(request.name))),
    PutProvider: unary(async (request: { name: string; json: Buffer; create: boolean }) =>
      json(
        await core.putProvider(request.name, JSON.parse(request.json.toString('utf8')), {
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
