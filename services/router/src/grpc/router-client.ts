import type {
  ClientDuplexStream,
  ClientReadableStream,
  ClientUnaryCall,
  Metadata,
  ServiceError,
} from '@grpc/grpc-js';
import { credentials } from '@grpc/grpc-js';
import { fromGrpcError, grpcChannel, type Usage } from '@gw/shared';
import type { ProviderHealth } from '../core/health.ts';
import type {
  CallOptions,
  CompleteResult,
  PassthroughRequest,
  PassthroughResponse,
  RouteRequest,
  RouterService,
  StreamItem,
} from '../core/router-service.ts';
import { type PassthroughFrame, RouterGrpcService, writeFrame } from './router-server.ts';

interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
}

type Callback<T> = (error: ServiceError | null, value?: T) => void;
type UnaryMethod = (
  request: unknown,
  metadata: Metadata | Callback<unknown>,
  callback?: Callback<unknown>,
) => ClientUnaryCall;

function fromWireUsage(usage: WireUsage): Usage {
  const mapped: Usage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
  };
  if (usage.cached_tokens) mapped.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return mapped;
}

/** RouterService over gRPC: the same interface as the core, one channel reused for every call. */
export class RouterClient implements RouterService {
  private readonly client: InstanceType<typeof RouterGrpcService>;

  constructor(address: string) {
    const channel = grpcChannel(address);
    this.client = new RouterGrpcService(channel.target, credentials.createInsecure(), channel.options);
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

  async complete(request: RouteRequest, options: CallOptions): Promise<CompleteResult> {
    const reply = await this.call<{ body: Buffer; provider: string; model: string; usage: WireUsage }>(
      'Complete',
      { json: Buffer.from(JSON.stringify(request)) },
      options.signal,
    );
    return {
      body: reply.body.toString('utf8'),
      provider: reply.provider,
      model: reply.model,
      usage: fromWireUsage(reply.usage),
    };
  }

  async *stream(request: RouteRequest, options: CallOptions): AsyncGenerator<StreamItem> {
    const call: ClientReadableStream<{
      chunk: Buffer;
      provider: string;
      model: string;
      usage?: WireUsage;
      has_usage: boolean;
    }> = (this.client as unknown as { Stream: (request: unknown) => ClientReadableStream<never> }).Stream({
      json: Buffer.from(JSON.stringify(request)),
    });
    const cancel = () => call.cancel();
    options.signal.addEventListener('abort', cancel, { once: true });
    try {
      for await (const message of call) {
        const item: StreamItem = { chunk: message.chunk.toString('utf8') };
        if (message.provider) item.provider = message.provider;
        if (message.model) item.model = message.model;
        if (message.has_usage && message.usage) item.usage = fromWireUsage(message.usage);
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
      head = JSON.parse(first.value.head.toString('utf8')) as typeof head;
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
