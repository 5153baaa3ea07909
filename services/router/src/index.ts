export * from './core/health.ts';
export * from './core/router-core.ts';
export * from './core/router-service.ts';
export * from './grpc/router-client.ts';
export * from './grpc/router-server.ts';
