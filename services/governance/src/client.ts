// `@gw/governance/client`: governance over gRPC, for ingress and admin.
export type * from './core/governance-service.ts';
export * from './grpc/governance-client.ts';
