// `@gw/shared/grpc`: what only gRPC clients and servers load (grpc-js, proto loading, error mapping).
export * from './grpc-channel.ts';
export * from './grpc-errors.ts';
export * from './grpc-security.ts';
export * from './grpc-server.ts';
export { LaneClient } from './lane-client.ts';
export { serveLanes } from './lane-server.ts';
export type { LaneReplyMessage, LaneRequestMessage } from './lane-wire.ts';
export * from './replica-pool.ts';
export * from './trace-metadata.ts';
