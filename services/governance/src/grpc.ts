// `@gw/governance/grpc`: the gRPC server of governance (its main).
export * from './grpc/governance-server.ts';
