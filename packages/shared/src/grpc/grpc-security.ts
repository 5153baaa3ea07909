import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  type ChannelCredentials,
  credentials,
  InterceptingCall,
  type Interceptor,
  Metadata,
  ServerCredentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  status,
} from '@grpc/grpc-js';
import { ConfigError } from '../config/gateway-config.ts';

/**
 * How the processes of one cluster recognise each other on their gRPC ports: a shared token every client
 * sends in metadata and every server checks in constant time, and optionally mutual TLS with certificates
 * from a mounted secret (docs/kubernetes.md). Nothing but the standard health check is served without them.
 */
export interface GrpcSecurity {
  /** GW_CLUSTER_TOKEN. */
  token: string;
  /** GW_GRPC_TLS_CA / _CERT / _KEY read at start: mutual TLS when set. */
  tls?: { ca: Buffer; cert: Buffer; key: Buffer };
}

/** The metadata entry that carries the cluster token. */
const TOKEN_METADATA = 'x-gw-cluster-token';

/** Served to anyone (Kubernetes' gRPC probes send no metadata); it says only whether the process serves. */
const OPEN_METHODS = new Set(['/grpc.health.v1.Health/Check']);

/** The variables of GrpcSecurity, as the cluster processes' environment schemas read them. */
export interface GrpcSecurityEnvironment {
  GW_CLUSTER_TOKEN: string;
  GW_GRPC_TLS_CA?: string | undefined;
  GW_GRPC_TLS_CERT?: string | undefined;
  GW_GRPC_TLS_KEY?: string | undefined;
}

/** Reads the token and, when configured, the three PEM files of mutual TLS (all three or none). */
export async function readGrpcSecurity(environment: GrpcSecurityEnvironment): Promise<GrpcSecurity> {
  const files = {
    GW_GRPC_TLS_CA: environment.GW_GRPC_TLS_CA,
    GW_GRPC_TLS_CERT: environment.GW_GRPC_TLS_CERT,
    GW_GRPC_TLS_KEY: environment.GW_GRPC_TLS_KEY,
  };
  const set = Object.entries(files).filter(([, path]) => path !== undefined);
  if (set.length === 0) return { token: environment.GW_CLUSTER_TOKEN };
  if (set.length < 3) {
    const missing = Object.keys(files).filter((name) => !set.some(([given]) => given === name));
    throw new ConfigError(
      `${missing.join(', ')}: is not set, and mutual TLS needs all of GW_GRPC_TLS_CA, _CERT, _KEY`,
    );
  }
  const read = async (name: keyof typeof files) => {
    try {
      return await readFile(files[name]!);
    } catch (error) {
      throw new ConfigError(`${name}: cannot read '${files[name]}': ${(error as Error).message}`);
    }
  };
  const ca = await read('GW_GRPC_TLS_CA');
  const cert = await read('GW_GRPC_TLS_CERT');
  const key = await read('GW_GRPC_TLS_KEY');
  return { token: environment.GW_CLUSTER_TOKEN, tls: { ca, cert, key } };
}

/** What a client process passes to each of its gRPC clients, less the address (GrpcClientSettings). */
export async function grpcClientSettings(
  environment: GrpcSecurityEnvironment & { GW_GRPC_DEADLINE_MS: number },
): Promise<{ security: GrpcSecurity; deadlineMs: number }> {
  return { security: await readGrpcSecurity(environment), deadlineMs: environment.GW_GRPC_DEADLINE_MS };
}

/** A server's credentials: TLS that requires a client certificate signed by the cluster's CA, or plain. */
export function serverCredentials(security: GrpcSecurity): ServerCredentials {
  if (!security.tls) return ServerCredentials.createInsecure();
  const { ca, cert, key } = security.tls;
  return ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true);
}

/** A client's credentials: its certificate and the cluster's CA, or plain. */
export function channelCredentials(security: GrpcSecurity): ChannelCredentials {
  if (!security.tls) return credentials.createInsecure();
  const { ca, cert, key } = security.tls;
  return credentials.createSsl(ca, key, cert);
}

/** Adds the cluster token to every call a client makes (unary and streaming alike). */
export function tokenInterceptor(security: GrpcSecurity): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, listener, next) => {
        metadata.set(TOKEN_METADATA, security.token);
        next(metadata, listener);
      },
    });
}

const digest = (text: string | Buffer) => createHash('sha256').update(text).digest();

/**
 * Refuses every call without the cluster token (UNAUTHENTICATED) before its handler runs. The token is
 * compared through fixed-length digests, so neither its length nor its content leaks through timing.
 */
export function tokenCheck(security: GrpcSecurity): ServerInterceptor {
  const expected = digest(security.token);
  return (method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata: Metadata, pass) => {
            const [given] = metadata.get(TOKEN_METADATA);
            const valid = given !== undefined && timingSafeEqual(digest(given), expected);
            if (valid || OPEN_METHODS.has(method.path)) {
              metadata.remove(TOKEN_METADATA);
              pass(metadata);
              return;
            }
            call.sendStatus({
              code: status.UNAUTHENTICATED,
              details: `${method.path} needs the cluster token (GW_CLUSTER_TOKEN) in ${TOKEN_METADATA}`,
              metadata: new Metadata(),
            });
          },
        });
      },
    });
}
