import type {
  CallOptions,
  ChannelCredentials,
  ClientDuplexStream,
  ClientOptions,
  ClientUnaryCall,
  Metadata,
  ServiceError,
} from '@grpc/grpc-js';
import { type LaneReplyMessage, type LaneRequestMessage, loadService } from '@gw/shared/grpc';

/** The Router service of proto/router.proto (loaded on first use). */
export const routerGrpcService = () => loadService('router', 'Router');

/** The messages of proto/router.proto as proto-loader decodes them (bytes are Buffers, defaults filled). */
export interface JsonMessage {
  json: Buffer;
}

/** A target tried before the one that served, as proto/router.proto's FailedTarget carries it. */
export interface FailedTargetMessage {
  provider: string;
  model: string;
  status: number;
  type: string;
  message: string;
}

export interface ServedMessage {
  json: Buffer;
  provider: string;
  /** Empty unless the provider answered the route's native request. */
  native: Buffer;
  fallback_index: number;
  key_id: string;
  failed_before: FailedTargetMessage[];
}

export interface StreamReplyMessage {
  chunk: Buffer;
  provider: string;
  /** Empty unless the stream answers the route's native request (and may be empty when it does). */
  native: string;
  /** Whether the stream answers the route's native request: `native` is then relayed, even when empty. */
  relays_native: boolean;
  /** With provider, on the first message only. */
  fallback_index: number;
  key_id: string;
  failed_before: FailedTargetMessage[];
}

/** One frame of the Passthrough RPC: `head` on the first frame of each direction, `chunk` on the others. */
export interface PassthroughFrame {
  head: Buffer;
  chunk: Buffer;
}

type Unary<Request, Reply> = (
  request: Request,
  options: CallOptions,
  callback: (error: ServiceError | null, reply?: Reply) => void,
) => ClientUnaryCall;

/** A client of the Router service with its methods typed (proto-loader gives them as plain functions). */
export interface RouterGrpcClient {
  Passthrough: (
    metadata: Metadata,
    options: CallOptions,
  ) => ClientDuplexStream<Partial<PassthroughFrame>, PassthroughFrame>;
  Lane: () => ClientDuplexStream<LaneRequestMessage, LaneReplyMessage<ServedMessage, StreamReplyMessage>>;
  ListProviders: Unary<Record<string, never>, JsonMessage>;
  GetProvider: Unary<{ name: string }, JsonMessage>;
  PutProvider: Unary<{ name: string; json: Buffer; create: boolean }, JsonMessage>;
  PatchProvider: Unary<{ name: string; json: Buffer }, JsonMessage>;
  DeleteProvider: Unary<{ name: string }, JsonMessage>;
  Health: Unary<Record<string, never>, JsonMessage>;
}

/** The grpc-js client of one router replica with its methods typed (its channel comes with the options). */
export function routerGrpcClient(
  target: string,
  credentials: ChannelCredentials,
  options: ClientOptions,
): RouterGrpcClient {
  const Service = routerGrpcService();
  const client = new Service(target, credentials, options);
  const method = <Method>(name: keyof RouterGrpcClient): Method => {
    const found = client[name];
    if (!found) throw new Error(`proto/router.proto declares no method ${name}`);
    return found.bind(client);
  };
  return {
    Passthrough: method('Passthrough'),
    Lane: method('Lane'),
    ListProviders: method('ListProviders'),
    GetProvider: method('GetProvider'),
    PutProvider: method('PutProvider'),
    PatchProvider: method('PatchProvider'),
    DeleteProvider: method('DeleteProvider'),
    Health: method('Health'),
  };
}

/** Writes a frame, waiting for the drain of a full buffer (back-pressure) or the end of the call. */
export async function writeFrame(
  stream: {
    write(frame: unknown): boolean;
    once(event: string, listener: () => void): unknown;
    off(event: string, listener: () => void): unknown;
  },
  frame: Partial<PassthroughFrame>,
): Promise<void> {
  if (stream.write(frame)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error']) stream.off(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error']) stream.once(event, done);
  });
}
