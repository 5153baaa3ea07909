export * from './compose.ts';
export * from './control.ts';
export * from './core/mcp-connection.ts';
export * from './core/mcp-runner-core.ts';
