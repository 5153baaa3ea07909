// `@gw/router/client`: the router over gRPC, for ingress and admin; loads no provider adapter.

export type * from './core/router-service.ts';
export * from './grpc/router-client.ts';
