export * from './compose.ts';
export * from './core/anonymous.ts';
export * from './core/governance-core.ts';
export * from './core/governance-service.ts';
