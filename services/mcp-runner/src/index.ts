export * from './core/mcp-runner-core.ts';
export * from './core/mcp-runner-service.ts';
export * from './core/tool-queue.ts';
