export * from './core/anonymous.ts';
export * from './core/governance-core.ts';
export * from './core/governance-service.ts';
export * from './grpc/governance-client.ts';
export * from './grpc/governance-server.ts';
