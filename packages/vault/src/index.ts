// `@gw/vault`: config secrets read from secret managers (docs/vault.md). Backends' SDKs load on first use.
// Alerts subscribe to unreadable secrets with `resolver.onSecretFailure(listener)` (a SecretFailure, never a value).
export { followSecretFailures } from './secret-failure-relay.ts';
export { type SecretFailure, SecretResolver } from './secret-resolver.ts';
export { publishVaultRefresh, startSecretResolver } from './start-secret-resolver.ts';
