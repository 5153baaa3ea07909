import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { decodeGatewayError, GatewayError, internalError } from '../errors/gateway-error.ts';

const ERROR_METADATA_KEY = 'gw-error-bin';

function grpcCode(httpStatus: number): status {
  if (httpStatus === 400 || httpStatus === 413) return status.INVALID_ARGUMENT;
  if (httpStatus === 401) return status.UNAUTHENTICATED;
  if (httpStatus === 403) return status.PERMISSION_DENIED;
  if (httpStatus === 404) return status.NOT_FOUND;
  if (httpStatus === 402 || httpStatus === 429) return status.RESOURCE_EXHAUSTED;
  if (httpStatus === 503) return status.UNAVAILABLE;
  if (httpStatus === 504) return status.DEADLINE_EXCEEDED;
  return status.INTERNAL;
}

/** GatewayError -> gRPC error; the whole error travels in binary metadata so nothing is lost. */
export function toGrpcError(thrown: unknown): Partial<ServiceError> {
  const error = thrown instanceof GatewayError ? thrown : internalError('internal error', thrown);
  const metadata = new Metadata();
  metadata.set(ERROR_METADATA_KEY, Buffer.from(JSON.stringify(error.toJSON())));
  return { code: grpcCode(error.status), details: error.message, metadata };
}

/** gRPC error -> GatewayError; a transport failure (peer down) becomes 503 service_unavailable. */
export function fromGrpcError(thrown: unknown): GatewayError {
  const serviceError = thrown as Partial<ServiceError>;
  const encoded = serviceError.metadata?.get(ERROR_METADATA_KEY)[0];
  const carried = encoded instanceof Buffer ? decodeGatewayError(encoded.toString('utf8')) : undefined;
  if (carried) return carried;
  if (serviceError.code === status.CANCELLED) {
    return new GatewayError({ type: 'cancelled', message: 'request cancelled' });
  }
  if (serviceError.code === status.UNAVAILABLE || serviceError.code === status.DEADLINE_EXCEEDED) {
    return new GatewayError({
      type: 'service_unavailable',
      message: `an internal service is unavailable: ${serviceError.details ?? 'no details'}`,
      retryAfter: 1,
    });
  }
  return internalError('internal error', thrown);
}
