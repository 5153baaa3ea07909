import type { ClientUnaryCall, ServiceError } from '@grpc/grpc-js';
import {
  chatCompletionChunkSchema,
  completionResponseSchema,
  embeddingsListSchema,
  GatewayError,
  internalError,
} from '@gw/shared';
import { decodeMessage, fromGrpcError } from '@gw/shared/grpc';
import { z } from 'zod';
import { providerHealthSchema } from '../core/health.ts';
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
import {
  type JsonMessage,
  type PassthroughFrame,
  type RouterGrpcClient,
  routerGrpcClient,
  type ServedMessage,
  writeFrame,
} from './router-proto.ts';
import { passthroughHeadSchema } from './wire-schemas.ts';

/** A provider config as the router answers it (keys redacted); its fields are the router's to check. */
const providerReplySchema = z.record(z.string(), z.unknown());

/** A failure of a call: the router's error carried over gRPC, or ours (a reply that fails its schema) as is. */
function callFailure(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : fromGrpcError(error);
}

/** Starts a unary call and settles with its reply; the signal, when given, cancels the call. */
function unaryCall<Reply>(
  start: (callback: (error: ServiceError | null, reply?: Reply) => void) => ClientUnaryCall,
  signal?: AbortSignal,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const call = start((error, reply) => {
      signal?.removeEventListener('abort', cancel);
      if (error) reject(fromGrpcError(error));
      else if (reply === undefined) reject(internalError('the router answered without a reply'));
      else resolve(reply);
    });
    const cancel = () => call.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
  });
}

/** RouterService over gRPC: the same interface as the core, one channel reused for every call. */
export class RouterClient implements RouterService {
  private readonly grpc: RouterGrpcClient;

  constructor(address: string) {
    this.grpc = routerGrpcClient(address);
  }

  /** A unary call answering JSON: the reply decoded and validated against `schema`. */
  private async json<Schema extends z.ZodType>(
    schema: Schema,
    what: string,
    start: (callback: (error: ServiceError | null, reply?: JsonMessage) => void) => ClientUnaryCall,
  ): Promise<z.infer<Schema>> {
    const reply = await unaryCall(start);
    return decodeMessage(schema, reply.json, { what, side: 'reply' });
  }

  /** A unary call answering a served result: the reply's JSON validated, and kept as the result's text. */
  private async served<Response>(
    method: 'Complete' | 'Embed',
    request: RouteRequest,
    options: CallOptions & { schema: z.ZodType<Response>; what: string },
  ): Promise<Served<Response>> {
    const message = { json: Buffer.from(JSON.stringify(request)) };
    const reply = await unaryCall<ServedMessage>(
      (callback) => this.grpc[method](message, callback),
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
    const call = this.grpc.Stream({ json: Buffer.from(JSON.stringify(request)) });
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
      throw callFailure(error);
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
    const call = this.grpc.Passthrough();
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
    const frames: AsyncIterator<PassthroughFrame> = call[Symbol.asyncIterator]();
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
      throw callFailure(error);
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
          throw callFailure(error);
        } finally {
          finish();
        }
      })(),
    };
  }

  listProviders() {
    return this.json(z.array(providerReplySchema), 'provider list', (callback) =>
      this.grpc.ListProviders({}, callback),
    );
  }

  getProvider(name: string) {
    return this.json(providerReplySchema, 'provider', (callback) =>
      this.grpc.GetProvider({ name }, callback),
    );
  }

  putProvider(name: string, config: unknown, options: { create: boolean }) {
    const request = { name, json: Buffer.from(JSON.stringify(config)), create: options.create };
    return this.json(providerReplySchema, 'provider', (callback) => this.grpc.PutProvider(request, callback));
  }

  async deleteProvider(name: string): Promise<void> {
    await unaryCall((callback) => this.grpc.DeleteProvider({ name }, callback));
  }

  health() {
    return this.json(z.array(providerHealthSchema), 'provider health', (callback) =>
      this.grpc.Health({}, callback),
    );
  }

  close(): void {
    this.grpc.close();
  }
}
