// `@gw/router/grpc`: the gRPC server of the router (its main).
export * from './grpc/router-server.ts';
