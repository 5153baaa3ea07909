// What ingress and admin use: the store records, the catalog, filtering, naming and the queue clients. It does
// not load the MCP SDK: only runners (and the embedded process) connect to MCP servers.
export * from './core/in-process-tool-queue.ts';
export * from './core/mcp-catalog.ts';
export * from './core/mcp-records.ts';
export * from './core/mcp-registry.ts';
export * from './core/mcp-runner-service.ts';
export * from './core/process-tool-job.ts';
export * from './core/tool-filter.ts';
export * from './core/tool-names.ts';
export * from './core/traced-tool-runner.ts';
