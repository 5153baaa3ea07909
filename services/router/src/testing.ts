// `@gw/router/testing`: what suites outside the router need of its internals: the adapter interface the
// provider contract (in @gw/testkit) drives, and the upstream client it hands adapters. Nothing in production
// imports it. The providers' wire fixtures sit beside it in src/testing/fixtures, for the router's own tests.
export type {
  AdapterContext,
  ChatInput,
  EmbeddingsInput,
  ProviderAdapter,
  ResolvedKey,
  StreamPiece,
  TextInput,
} from './core/providers/adapter.ts';
export { VerbatimChunk } from './core/providers/adapter.ts';
export { UpstreamClient } from './core/upstream-client.ts';
// ConverseStream frames in Bedrock's wire format, for suites that fake Bedrock behind a gateway.
export { eventFrame as bedrockEventFrame } from './testing/fixtures/bedrock-fixtures.ts';
