export * from './compose.ts';
export * from './core/router-core.ts';
export * from './core/router-service.ts';
