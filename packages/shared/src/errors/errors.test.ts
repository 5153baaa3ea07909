import { describe, expect, it } from 'vitest';
import { fromGrpcError, toGrpcError } from '../grpc/grpc-errors.ts';
import { GatewayError, isTransient } from './gateway-error.ts';
import { errorBody } from './http.ts';

describe('error mappers', () => {
  const budget = new GatewayError({
    type: 'budget_exceeded',
    message: 'team budget exhausted',
    provider: 'openai',
    model: 'gpt-4o-mini',
    retryAfter: 30,
  });

  it('writes the DESIGN.md §6 body', () => {
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
});
