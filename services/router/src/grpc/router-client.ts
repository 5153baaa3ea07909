import type {
  ClientDuplexStream,
  ClientReadableStream,
  ClientUnaryCall,
  Metadata,
  ServiceError,
} from '@grpc/grpc-js';
import { credentials } from '@grpc/grpc-js';
import { chatCompletionChunkSchema, completionResponseSchema, embeddingsListSchema } from '@gw/shared';
import { decodeMessage, fromGrpcError, grpcChannel } from '@gw/shared/grpc';
import type { z } from 'zod';
import type { ProviderHealth } from '../core/health.ts';
import type {
  CallOptions,
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  PassthroughRequest,
  PassthroughResponse,
  RouteRequest,
  RouterService,
  Served,
  StreamItem,
} from '../core/router-service.ts';
import { type PassthroughFrame, routerGrpcService, writeFrame } from './router-proto.ts';
import { passthroughHeadSchema } from './wire-schemas.ts';

type Callback<T> = (error: ServiceError | null, value?: T) => void;
type UnaryMethod = (
  request: unknown,
  metadata: Metadata | Callback<unknown>,
  callback?: Callback<unknown>,
) => ClientUnaryCall;

/** RouterService over gRPC: the same interface as the core, one channel reused for every call. */
export class RouterClient implements RouterService {
  private readonly client: InstanceType<ReturnType<typeof routerGrpcService>>;

  constructor(address: string) {
    const channel = grpcChannel(address);
    const Service = routerGrpcService();
    this.client = new Service(channel.target, credentials.createInsecure(), channel.options);
  }

  private call<T>(method: string, request: unknown, signal?: AbortSignal): Promise<T> {
    return new Promise((resolve, reject) => {
      const invoke = (this.client as unknown as Record<string, UnaryMethod>)[method]!.bind(this.client);
      const call = invoke(request, (error: ServiceError | null, value?: unknown) => {
        signal?.removeEventListener('abort', cancel);
        if (error) reject(fromGrpcError(error));
        else resolve(value as T);
      });
      const cancel = () => call.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  private async json<T>(method: string, request: unknown): Promise<T> {
    const reply = await this.call<{ json: Buffer }>(method, request);
    return JSON.parse(reply.json.toString('utf8')) as T;
  }

  /** A unary call answering a served result: the reply's JSON validated, and kept as the result's text. */
  private async served<Response>(
    method: 'Complete' | 'Embed',
    request: RouteRequest,
    options: CallOptions & { schema: z.ZodType<Response>; what: string },
  ): Promise<Served<Response>> {
    const reply = await this.call<{ json: Buffer; provider: string }>(
      method,
      { json: Buffer.from(JSON.stringify(request)) },
      options.signal,
    );
    const response = decodeMessage(options.schema, reply.json, { what: options.what, side: 'reply' });
    return { response, provider: reply.provider, json: reply.json.toString('utf8') };
  }

  complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult> {
    return this.served('Complete', request, {
      ...options,
      schema: completionResponseSchema,
      what: 'completion',
    });
  }

  embed(request: EmbeddingsRoute, options: CallOptions): Promise<EmbeddingsResult> {
    return this.served('Embed', request, {
      ...options,
      schema: embeddingsListSchema,
      what: 'embeddings list',
    });
  }

  async *stream(request: CompletionRoute, options: CallOptions): AsyncGenerator<StreamItem> {
    const call: ClientReadableStream<{ chunk: Buffer; provider: string }> = (
      this.client as unknown as { Stream: (request: unknown) => ClientReadableStream<never> }
    ).Stream({ json: Buffer.from(JSON.stringify(request)) });
    const cancel = () => call.cancel();
    options.signal.addEventListener('abort', cancel, { once: true });
    try {
      for await (const message of call) {
        const chunk = decodeMessage(chatCompletionChunkSchema, message.chunk, {
          what: 'stream chunk',
          side: 'reply',
        });
        const item: StreamItem = { chunk, json: message.chunk.toString('utf8') };
        if (message.provider) item.provider = message.provider;
        yield item;
      }
    } catch (error) {
      throw fromGrpcError(error);
    } finally {
      options.signal.removeEventListener('abort', cancel);
      call.cancel();
    }
  }

  /**
   * Pass-through over one bidi stream: the head, then the body as it is read (back-pressure respected), while
   * the answer's head and body come back; the answer's head is awaited, its body streams on.
   */
  async passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse> {
    const call = (
      this.client as unknown as {
        Passthrough: () => ClientDuplexStream<Partial<PassthroughFrame>, PassthroughFrame>;
      }
    ).Passthrough();
    const cancel = () => call.cancel();
    options.signal.addEventListener('abort', cancel, { once: true });
    const finish = () => {
      options.signal.removeEventListener('abort', cancel);
      call.cancel();
    };
    // Errors of the upload surface as the call's status on the reading side; the pump only stops.
    const pump = async () => {
      await writeFrame(call, { head: Buffer.from(JSON.stringify(request)) });
      if (body) {
        for await (const chunk of body) {
          await writeFrame(call, { chunk: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) });
        }
      }
      call.end();
    };
    pump().catch(() => call.cancel());
    const frames = call[Symbol.asyncIterator]() as AsyncIterator<PassthroughFrame>;
    let head: { status: number; headers: Record<string, string | string[]> };
    try {
      const first = await frames.next();
      if (first.done) throw new Error('the router ended the pass-through without an answer');
      head = decodeMessage(passthroughHeadSchema, first.value.head, {
        what: 'pass-through answer head',
        side: 'reply',
      });
    } catch (error) {
      finish();
      throw fromGrpcError(error);
    }
    return {
      status: head.status,
      headers: head.headers,
      body: (async function* () {
        try {
          for (let next = await frames.next(); !next.done; next = await frames.next()) {
            if (next.value.chunk.length > 0) yield next.value.chunk;
          }
        } catch (error) {
          throw fromGrpcError(error);
        } finally {
          finish();
        }
      })(),
    };
  }

  listProviders() {
    return this.json<Array<Record<string, unknown>>>('ListProviders', {});
  }

  getProvider(name: string) {
    return this.json<Record<string, unknown>>('GetProvider', { name });
  }

  putProvider(name: string, config: unknown, options: { create: boolean }) {
    return this.json<Record<string, unknown>>('PutProvider', {
      name,
      json: Buffer.from(JSON.stringify(config)),
      create: options.create,
    });
  }

  async deleteProvider(name: string): Promise<void> {
    await this.json('DeleteProvider', { name });
  }

  health() {
    return this.json<ProviderHealth[]>('Health', {});
  }

  close(): void {
    this.client.close();
  }
}
