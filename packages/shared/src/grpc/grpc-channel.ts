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

/** The package of each proto file: gw's services, and the standard health check. */
const PACKAGES = {
  governance: ['gw', 'governance'],
  router: ['gw', 'router'],
  health: ['grpc', 'health', 'v1'],
};

/**
 * The service constructor `<package>.<Service>` of `proto/<name>.proto`, loaded on first use (importing a
 * client or server module parses no proto) and kept.
 */
export function loadService(file: keyof typeof PACKAGES, service: string): ServiceClientConstructor {
  const known = loaded.get(`${file}.${service}`);
  if (known) return known;
  const definition = loadSync(`${PROTO_DIR}${file}.proto`, {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [PROTO_DIR],
  });
  let namespace = loadPackageDefinition(definition);
  for (const name of PACKAGES[file]) namespace = namespace[name] as GrpcObject;
  const serviceConstructor = namespace[service] as ServiceClientConstructor;
  loaded.set(`${file}.${service}`, serviceConstructor);
  return serviceConstructor;
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
