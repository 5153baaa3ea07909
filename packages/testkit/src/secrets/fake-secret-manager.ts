import type { VaultConfig } from '@gw/shared';

/**
 * What the secret-backend contract needs of a fake secret manager: a loopback server that speaks the real API,
 * checks the credentials it is sent, and lets a test write versions and break reads.
 */
export interface FakeSecretManager {
  url: string;
  /** The reference of a secret of this fake, with a field when given (`vault.secret/gw/openai#api_key`). */
  reference(name: string, field?: string): string;
  /** Writes a new version of a secret: its fields (a KV secret, or a JSON object as the secret's text). */
  put(name: string, fields: Record<string, string>): void;
  /** Reads of secrets answer this status (an outage, a revoked permission) until `heal`. */
  breakReads(status: number): void;
  heal(): void;
  /** How many secret reads it answered (successful or not). */
  reads(): number;
  /** The `vault` config section that points gw at this fake. */
  vaultConfig: Partial<VaultConfig>;
  close(): Promise<void>;
}
