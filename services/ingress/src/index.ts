export * from './core/ingress-app.ts';
export * from './core/mcp-tools.ts';
export * from './core/parse-request.ts';
export * from './core/route.ts';
export * from './core/sse-writer.ts';
export * from './core/virtual-key-header.ts';
export * from './pipeline/pipeline.ts';
export * from './pipeline/stage.ts';
