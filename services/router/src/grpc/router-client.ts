import { type ClientUnaryCall, type ServiceError, status } from '@grpc/grpc-js';
import {
  embeddingsListSchema,
  GatewayError,
  internalError,
  serviceUnavailable,
  targetAttemptSchema,
  UnansweredCallError,
} from '@gw/shared';
import {
  decodeMessage,
  fromGrpcError,
  type GrpcClientSettings,
  LaneClient,
  neverSent,
  ReplicaPool,
  traceMetadata,
} from '@gw/shared/grpc';
import { providerHealthReportSchema } from '@gw/shared/health';
import { z } from 'zod';
import type {
  CallOptions,
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  PassthroughRequest,
  PassthroughResponse,
  ProviderWriteOptions,
  RouteRequest,
  RouterService,
  Served,
  ServedBy,
  StreamItem,
} from '../core/router-service.ts';
import {
  type JsonMessage,
  type PassthroughFrame,
  type RouterGrpcClient,
  routerGrpcClient,
  type ServedMessage,
  type StreamReplyMessage,
  writeFrame,
} from './router-proto.ts';
import { chunkReplySchema, completionReplySchema, passthroughHeadSchema } from './wire-schemas.ts';

/** A native answer: any JSON (the surface that asked for it reads it). */
const NATIVE_ANSWER = z.unknown();

/** A provider config as the router answers it (keys redacted); its fields are the router's to check. */
const providerReplySchema = z.record(z.string(), z.unknown());

/** A failure of a call: the router's error carried over gRPC, or ours (a reply that fails its schema) as is. */
function callFailure(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : fromGrpcError(error);
}

/**
 * A failure of a call on a lane: the router's own error as it is; a call the pool never sent (no router replica
 * connected, its window full) as a plain 503, nothing to charge; a lane that broke or a deadline missed after
 * the call was sent, as the replica's fault and a call that may have been served (UnansweredCallError).
 */
function laneFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (neverSent(error)) return serviceUnavailable('no router replica could take the call', error);
  const failure =
    (error as { code?: unknown } | undefined)?.code === status.UNAVAILABLE
      ? serviceUnavailable('a router replica stopped answering', error)
      : fromGrpcError(error);
  return new UnansweredCallError(failure);
}

/** Starts a unary call and settles with its reply, or the call's own error (for the replica pool to judge). */
function unaryCall<Reply>(
  start: (callback: (error: ServiceError | null, reply?: Reply) => void) => ClientUnaryCall,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    start((error, reply) => {
      if (error) reject(error);
      else if (reply === undefined) reject(internalError('the router answered without a reply'));
      else resolve(reply);
    });
  });
}

export interface RouterClientSettings extends GrpcClientSettings {
  /** GW_ROUTER_CALL_DEADLINE_MS: the most a completion, embedding or pass-through call may take. */
  callDeadlineMs: number;
}

/**
 * RouterService over gRPC: the same interface as the core, over the router's replicas (ReplicaPool: a replica
 * that is down or frozen is ejected; reads are tried once more on another). Completions are never repeated
 * (the first router may already have called the upstream); they fail with 503 and the caller's fallbacks or
 * retries decide.
 */
export class RouterClient implements RouterService {
  private readonly replicas: ReplicaPool<RouterGrpcClient>;
  /** Completions, embeddings and streams: messages on one stream per replica, not a call each (lane-client.ts). */
  private readonly lanes: LaneClient<RouterGrpcClient, ServedMessage, StreamReplyMessage>;
  private readonly deadlineMs: number;
  private readonly callDeadlineMs: number;
  private readonly observe: GrpcClientSettings['observe'];

  constructor(settings: RouterClientSettings) {
    this.deadlineMs = settings.deadlineMs;
    this.callDeadlineMs = settings.callDeadlineMs;
    this.observe = settings.observe;
    this.replicas = new ReplicaPool({ ...settings, create: routerGrpcClient });
    this.lanes = new LaneClient({ pool: this.replicas, open: (stub) => stub.Lane() });
  }

  /** Runs a call on a replica, reporting its failure to the pool (a replica fault ejects the replica). */
  private async onReplica<Result>(run: (grpc: RouterGrpcClient) => Promise<Result>): Promise<Result> {
    const picked = await this.replicas.connected();
    try {
      return await run(picked.stub);
    } catch (error) {
      this.replicas.report(picked.target, error);
      throw error;
    }
  }

  /**
   * A pass-through call on a connected replica: `bind` cancels the call when the caller goes away or the
   * replica stops answering health checks (and gives the undo, for when the call ends); `failure` reports how
   * it failed to the pool and names the replica that stopped answering.
   */
  private async longCall(callerSignal: AbortSignal) {
    const picked = await this.replicas.connected().catch((error) => {
      throw callFailure(error);
    });
    const watched = this.replicas.watch(picked.target);
    return {
      stub: picked.stub,
      bind: (call: { cancel(): void }) => {
        const cancel = () => call.cancel();
        callerSignal.addEventListener('abort', cancel, { once: true });
        watched.signal.addEventListener('abort', cancel, { once: true });
        return () => {
          callerSignal.removeEventListener('abort', cancel);
          watched.signal.removeEventListener('abort', cancel);
          watched.release();
        };
      },
      failure: (error: unknown): GatewayError => {
        this.replicas.report(picked.target, error);
        return watched.faulted()
          ? new UnansweredCallError(
              serviceUnavailable(
                'a router replica stopped answering',
                new Error(`the router replica ${picked.target} stopped answering`),
              ),
            )
          : callFailure(error);
      },
    };
  }

  /** A short unary call answering JSON (a read: retried once on another replica), decoded against `schema`. */
  private async json<Schema extends z.ZodType>(
    schema: Schema,
    what: string,
    start: (
      grpc: RouterGrpcClient,
      options: { deadline: number },
      callback: (error: ServiceError | null, reply?: JsonMessage) => void,
    ) => ClientUnaryCall,
    options: { retry: boolean } = { retry: true },
  ): Promise<z.infer<Schema>> {
    const reply = await this.replicas
      .call(
        (grpc) =>
          unaryCall<JsonMessage>((callback) =>
            start(grpc, { deadline: Date.now() + this.deadlineMs * 10 }, callback),
          ),
        options,
      )
      .catch((error) => {
        throw callFailure(error);
      });
    return decodeMessage(schema, reply.json, { what, side: 'reply' });
  }

  /** A Complete or Embed call on a lane: the reply's JSON validated, and kept as the result's text. */
  private async served<Response>(
    method: 'Complete' | 'Embed',
    request: RouteRequest,
    options: CallOptions & { schema: z.ZodType<Response>; what: string },
  ): Promise<Served<Response> & { native?: unknown }> {
    const startedAt = performance.now();
    const reply = await this.lanes
      .call(method, Buffer.from(JSON.stringify(request)), {
        signal: options.signal,
        trace: options.trace,
        deadlineMs: this.callDeadlineMs,
      })
      .catch((error: unknown) => {
        throw laneFailure(error);
      })
      .finally(() => this.observe?.(`router.${method}`, (performance.now() - startedAt) / 1000));
    const response = decodeMessage(options.schema, reply.json, { what: options.what, side: 'reply' });
    const served = {
      response,
      provider: reply.provider,
      servedBy: servedByOf(reply),
      json: reply.json.toString('utf8'),
    };
    if (reply.native.length === 0) return served;
    return {
      ...served,
      native: decodeMessage(NATIVE_ANSWER, reply.native, { what: 'native answer', side: 'reply' }),
    };
  }

  complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult> {
    return this.served('Complete', request, {
      ...options,
      schema: completionReplySchema,
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
    const startedAt = performance.now();
    const json = Buffer.from(JSON.stringify(request));
    const messages = this.lanes.stream('Stream', json, {
      signal: options.signal,
      trace: options.trace,
      deadlineMs: this.callDeadlineMs,
    });
    let first = true;
    try {
      for await (const message of messages) {
        if (first) {
          // A stream's hop latency is its time to the first chunk.
          first = false;
          this.observe?.('router.Stream', (performance.now() - startedAt) / 1000);
        }
        const chunk = decodeMessage(chunkReplySchema, message.chunk, {
          what: 'stream chunk',
          side: 'reply',
        });
        const item: StreamItem = { chunk, json: message.chunk.toString('utf8') };
        if (message.provider) {
          item.provider = message.provider;
          item.servedBy = servedByOf(message);
        }
        // An empty `native` still means "relayed": a later chunk of an upstream event already written.
        if (message.relays_native) item.native = message.native;
        yield item;
      }
    } catch (error) {
      throw laneFailure(error);
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
    const long = await this.longCall(options.signal);
    const call = long.stub.Passthrough(traceMetadata(options.trace), {
      deadline: Date.now() + this.callDeadlineMs,
    });
    const unbind = long.bind(call);
    const finish = () => {
      unbind();
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
      throw long.failure(error);
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
          throw long.failure(error);
        } finally {
          finish();
        }
      })(),
    };
  }

  listProviders() {
    return this.json(z.array(providerReplySchema), 'provider list', (grpc, options, callback) =>
      grpc.ListProviders({}, options, callback),
    );
  }

  getProvider(name: string) {
    return this.json(providerReplySchema, 'provider', (grpc, options, callback) =>
      grpc.GetProvider({ name }, options, callback),
    );
  }

  putProvider(name: string, config: unknown, options: ProviderWriteOptions & { create: boolean }) {
    const request = {
      name,
      json: Buffer.from(JSON.stringify(config)),
      create: options.create,
      allow_secret_references: options.allowSecretReferences === true,
    };
    return this.json(
      providerReplySchema,
      'provider',
      (grpc, callOptions, callback) => grpc.PutProvider(request, callOptions, callback),
      { retry: false },
    );
  }

  patchProvider(name: string, patch: Record<string, unknown>, options: ProviderWriteOptions = {}) {
    const request = {
      name,
      json: Buffer.from(JSON.stringify(patch)),
      allow_secret_references: options.allowSecretReferences === true,
    };
    return this.json(
      providerReplySchema,
      'provider',
      (grpc, callOptions, callback) => grpc.PatchProvider(request, callOptions, callback),
      // Not repeated on another replica: a patch that removed a key would fail the second time.
      { retry: false },
    );
  }

  async deleteProvider(name: string): Promise<void> {
    const deadline = Date.now() + this.deadlineMs * 10;
    await this.onReplica((grpc) =>
      unaryCall((callback) => grpc.DeleteProvider({ name }, { deadline }, callback)),
    ).catch((error) => {
      throw callFailure(error);
    });
  }

  health() {
    return this.json(z.array(providerHealthReportSchema), 'provider health', (grpc, options, callback) =>
      grpc.Health({}, options, callback),
    );
  }

  /** Router replicas connected and answering their health checks (the ingress's readiness). */
  servingReplicas(): number {
    return this.replicas.servingCount();
  }

  close(): void {
    this.lanes.close();
    this.replicas.close();
  }
}

/**
 * The served target and key as the proto carries them (an empty key id is none), and the targets that failed
 * first, each checked (one the schema refuses is dropped: it is a log record's detail, not the answer).
 */
function servedByOf(message: Pick<ServedMessage, 'fallback_index' | 'key_id' | 'failed_before'>): ServedBy {
  const failedBefore = (message.failed_before ?? []).flatMap((failed) => {
    const parsed = targetAttemptSchema.safeParse(failed);
    return parsed.success ? [parsed.data] : [];
  });
  return {
    fallbackIndex: message.fallback_index,
    keyId: message.key_id || undefined,
    ...(failedBefore.length > 0 && { failedBefore }),
  };
}
