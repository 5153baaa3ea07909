import { fileURLToPath } from 'node:url';
import { type GrpcObject, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { z } from 'zod';
import { internalError } from '../errors/gateway-error.ts';
import { parseJson, validate } from '../http/body.ts';

/** The one set of proto-loader options every service uses. */
const PROTO_LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

const PROTO_DIR = fileURLToPath(new URL('../../../../proto/', import.meta.url));

const loaded = new Map<string, ServiceClientConstructor>();

/**
 * The service constructor `gw.<name>.<Service>` of `proto/<name>.proto`, loaded on first use (importing a
 * client or server module parses no proto) and kept.
 */
export function loadService(file: 'governance' | 'router', service: string): ServiceClientConstructor {
  const known = loaded.get(`${file}.${service}`);
  if (known) return known;
  const definition = loadSync(`${PROTO_DIR}${file}.proto`, {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [PROTO_DIR],
  });
  const root = loadPackageDefinition(definition);
  const namespace = (root['gw'] as GrpcObject)[file] as GrpcObject;
  const serviceConstructor = namespace[service] as ServiceClientConstructor;
  loaded.set(`${file}.${service}`, serviceConstructor);
  return serviceConstructor;
}

/** Channel options shared by every client: keepalive so dead peers are noticed, large messages allowed. */
const GRPC_CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};

/**
 * Target and options of a client channel. Several comma-separated addresses (or a `dns:` name with several
 * records, as a headless Kubernetes service gives) are balanced round-robin per call.
 */
export function grpcChannel(address: string): { target: string; options: Record<string, string | number> } {
  const balanced = address.includes(',') || address.startsWith('dns:');
  const target = address.includes(',') ? `ipv4:${address}` : address;
  return {
    target,
    options: balanced
      ? {
          ...GRPC_CHANNEL_OPTIONS,
          'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
        }
      : GRPC_CHANNEL_OPTIONS,
  };
}

/**
 * Decodes a JSON message of a gRPC call against its schema. A request that does not match is the caller's
 * error (invalid_request naming the field); a reply that does not match is a broken peer (internal_error).
 */
export function decodeMessage<Schema extends z.ZodType>(
  schema: Schema,
  bytes: Buffer,
  options: { what: string; side: 'request' | 'reply' },
): z.infer<Schema> {
  try {
    return validate(schema, parseJson(bytes), options.what);
  } catch (error) {
    if (options.side === 'request') throw error;
    throw internalError(`malformed ${options.what} from a peer service: ${(error as Error).message}`, error);
  }
}
