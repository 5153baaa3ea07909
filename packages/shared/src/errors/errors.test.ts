import { Metadata, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { fromGrpcError, toGrpcError } from '../grpc/grpc-errors.ts';
import {
  decodeGatewayError,
  ERROR_CATALOG,
  type ErrorType,
  encodeGatewayError,
  GatewayError,
  isTransient,
  requestCancelled,
} from './gateway-error.ts';
import { errorBody } from './http.ts';

describe('error mappers', () => {
  const budget = new GatewayError({
    type: 'budget_exceeded',
    message: 'team budget exhausted',
    provider: 'openai',
    model: 'gpt-4o-mini',
    retryAfter: 30,
  });

  it('writes the gateway error body', () => {
    expect(errorBody(budget, 'req-1')).toEqual({
      error: { type: 'budget_exceeded', message: 'team budget exhausted', code: null, param: null },
      status_code: 402,
      is_gateway_error: true,
      request_id: 'req-1',
      extra_fields: { provider: 'openai', model: 'gpt-4o-mini' },
    });
  });

  it('round-trips a GatewayError through gRPC without losing fields', () => {
    const back = fromGrpcError(toGrpcError(budget));
    expect(back.toJSON()).toEqual(budget.toJSON());
  });

  it('turns an unknown thrown value into a 500 that does not leak its text', () => {
    const back = fromGrpcError(toGrpcError(new Error('secret sk-123 leaked')));
    expect(back.status).toBe(500);
    expect(back.message).not.toContain('sk-123');
  });

  it('maps a dead peer to 503 service_unavailable', () => {
    expect(fromGrpcError({ code: 14, details: 'No connection established' }).type).toBe(
      'service_unavailable',
    );
  });

  it.each([
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
    [422, false],
  ])('treats upstream %i as transient: %s', (status, transient) => {
    expect(
      isTransient(new GatewayError({ type: 'upstream_error', status, message: 'x', upstream: true })),
    ).toBe(transient);
  });

  it('never retries a gateway-made 4xx or 5xx', () => {
    expect(isTransient(new GatewayError({ type: 'internal_error', message: 'x' }))).toBe(false);
  });

  it('maps a gRPC CANCELLED status to the cancelled type (499), and a cancelled error back to CANCELLED', () => {
    expect(fromGrpcError({ code: status.CANCELLED, details: 'Cancelled on client' })).toMatchObject({
      type: 'cancelled',
      status: 499,
    });
    expect(toGrpcError(requestCancelled()).code).toBe(status.CANCELLED);
    expect(fromGrpcError(toGrpcError(requestCancelled())).type).toBe('cancelled');
  });

  function withMetadata(value: Buffer, code = status.INTERNAL) {
    const metadata = new Metadata();
    metadata.set('gw-error-bin', value);
    return { code, details: 'peer failed', metadata };
  }

  it.each([
    ['text that is not JSON', Buffer.from('{not json')],
    ['JSON of another shape', Buffer.from(JSON.stringify({ type: 'teapot', status: 'x' }))],
    ['JSON that is not an object', Buffer.from('42')],
    [
      'a status out of range',
      Buffer.from(JSON.stringify({ type: 'internal_error', status: 9, message: 'x' })),
    ],
  ])('turns %s in the error metadata into a clean 500', (_, value) => {
    const error = fromGrpcError(withMetadata(value));
    expect(error).toMatchObject({ type: 'internal_error', status: 500, message: 'internal error' });
  });

  it('falls back to the status when the metadata is foreign: a dead peer is still a 503', () => {
    expect(fromGrpcError(withMetadata(Buffer.from('garbage'), status.UNAVAILABLE))).toMatchObject({
      type: 'service_unavailable',
      status: 503,
      retryAfter: 1,
    });
  });

  it.each([
    ['null', null],
    ['a string', 'boom'],
    ['an object with fields of other types', { code: 'UNAVAILABLE', metadata: 'nope' }],
  ])('turns %s thrown by a call into a 500 without crashing', (_, thrown) => {
    expect(fromGrpcError(thrown)).toMatchObject({ type: 'internal_error', status: 500 });
  });

  it('still sends an error whose upstream body cannot be written as JSON (without that body)', () => {
    const body: Record<string, unknown> = { reason: 'loop' };
    body.self = body;
    const error = new GatewayError({ type: 'upstream_error', status: 500, message: 'x', upstreamBody: body });
    const back = fromGrpcError(toGrpcError(error));
    expect(back).toMatchObject({
      type: 'upstream_error',
      status: 500,
      message: 'x',
      upstreamBody: undefined,
    });
  });
});

describe('error statuses', () => {
  it.each(Object.keys(ERROR_CATALOG) as ErrorType[])('%s takes its status from the catalog', (type) => {
    expect(new GatewayError({ type, message: 'x' }).status).toBe(ERROR_CATALOG[type].status);
  });

  it('keeps an upstream status on the types that relay one, and only on those', () => {
    expect(new GatewayError({ type: 'upstream_error', status: 429, message: 'x' }).status).toBe(429);
    expect(new GatewayError({ type: 'all_targets_failed', status: 401, message: 'x' }).status).toBe(401);
    expect(new GatewayError({ type: 'queue_full', status: 429, message: 'x' }).status).toBe(429);
    expect(new GatewayError({ type: 'queue_full', status: 500, message: 'x' }).status).toBe(429);
  });

  it('round-trips through the wire text, and refuses text that is not a gateway error', () => {
    const error = new GatewayError({ type: 'upstream_error', status: 418, message: 'x', upstream: true });
    expect(decodeGatewayError(encodeGatewayError(error))?.toJSON()).toEqual(error.toJSON());
    expect(decodeGatewayError('{"type":"nope","message":"x"}')).toBeUndefined();
    expect(decodeGatewayError('')).toBeUndefined();
  });
});
