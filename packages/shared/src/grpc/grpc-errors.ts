import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { z } from 'zod';
import {
  decodeGatewayError,
  encodeGatewayError,
  GatewayError,
  internalError,
  requestCancelled,
  serviceUnavailable,
} from '../errors/gateway-error.ts';

const ERROR_METADATA_KEY = 'gw-error-bin';

function grpcCode(httpStatus: number): status {
  if (httpStatus === 400 || httpStatus === 413) return status.INVALID_ARGUMENT;
  if (httpStatus === 401) return status.UNAUTHENTICATED;
  if (httpStatus === 403) return status.PERMISSION_DENIED;
  if (httpStatus === 404) return status.NOT_FOUND;
  if (httpStatus === 402 || httpStatus === 429) return status.RESOURCE_EXHAUSTED;
  if (httpStatus === 499) return status.CANCELLED;
  if (httpStatus === 503) return status.UNAVAILABLE;
  if (httpStatus === 504) return status.DEADLINE_EXCEEDED;
  return status.INTERNAL;
}

/** GatewayError -> gRPC error; the whole error travels in binary metadata so nothing is lost. */
export function toGrpcError(thrown: unknown): Partial<ServiceError> {
  const error = thrown instanceof GatewayError ? thrown : internalError('internal error', thrown);
  const metadata = new Metadata();
  metadata.set(ERROR_METADATA_KEY, Buffer.from(encodeGatewayError(error)));
  return { code: grpcCode(error.status), details: error.message, metadata };
}

/** The fields of a failed call gw reads; a field of another shape counts as absent, a non-object as nothing. */
const serviceErrorSchema = z.object({
  code: z.number().optional().catch(undefined),
  details: z.string().optional().catch(undefined),
  metadata: z.instanceof(Metadata).optional().catch(undefined),
});

/** Whether a failed call carries one of gw's errors (the peer answered), rather than a transport failure. */
export function carriesGatewayError(thrown: unknown): boolean {
  const metadata = (thrown as { metadata?: unknown } | undefined)?.metadata;
  return metadata instanceof Metadata && metadata.get(ERROR_METADATA_KEY).length > 0;
}

/**
 * gRPC error -> GatewayError: the error the peer carried in metadata when it is one of gw's; otherwise the
 * status decides (cancelled, 503 for a peer that is down or too slow, else a 500 that does not leak text).
 */
export function fromGrpcError(thrown: unknown): GatewayError {
  const parsed = serviceErrorSchema.safeParse(thrown);
  if (!parsed.success) return internalError('internal error', thrown);
  const { code, metadata } = parsed.data;
  const encoded = metadata?.get(ERROR_METADATA_KEY)[0];
  const carried = encoded instanceof Buffer ? decodeGatewayError(encoded.toString('utf8')) : undefined;
  if (carried) return carried;
  if (code === status.CANCELLED) return requestCancelled('request cancelled');
  // What grpc-js says (peer addresses, timings) is for the operator's log, through the cause, not the caller.
  if (code === status.DEADLINE_EXCEEDED)
    return serviceUnavailable('an internal service did not answer in time', thrown);
  if (code === status.UNAVAILABLE) return serviceUnavailable('an internal service is unavailable', thrown);
  return internalError('internal error', thrown);
}
