export * from './fake-anthropic.ts';
export * from './fake-gemini.ts';
export * from './fake-openai.ts';
export * from './fake-upstream.ts';
export * from './gateway-launcher.ts';
export * from './mcp/mcp-servers.ts';
export { runStoreContract } from './store-contract.ts';
