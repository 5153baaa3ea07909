import type { SecretBackendName } from '@gw/shared';

/** What a backend read: a KV secret's fields, or a secret's text. */
export type SecretContent = string | Record<string, unknown>;

/** One secret manager. `secret` is the part of a reference between the prefix and `#field`. */
export interface SecretBackend {
  readonly name: SecretBackendName;
  read(secret: string): Promise<SecretContent>;
  close?(): Promise<void>;
}

/**
 * A read that failed. Its message says what the backend answered (status, error code) and never carries a
 * secret value: it goes to logs, the status route and failure events.
 */
export class SecretReadError extends Error {
  override name = 'SecretReadError';
}
