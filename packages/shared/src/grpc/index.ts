// `@gw/shared/grpc`: what only gRPC clients and servers load (grpc-js, proto loading, error mapping).
export * from './call-lanes.ts';
export * from './grpc-channel.ts';
export * from './grpc-errors.ts';
export * from './grpc-security.ts';
export * from './grpc-server.ts';
export * from './replica-pool.ts';
export * from './trace-metadata.ts';
