import {
  type Logger,
  type Metrics,
  parseSecretReference,
  type SecretBackendName,
  type SecretLookup,
  type SecretReference,
} from '@gw/shared';
import type { SecretBackend, SecretContent } from './secret-backend.ts';

/** The most references one process reads (and the most untracked ones it remembers warning about). */
const MAX_REFERENCES = 1000;

/** A reference that could not be read: what the alerts subscribe to (never a value). */
export interface SecretFailure {
  reference: string;
  backend: SecretBackendName;
  error: string;
  /** Whether a last good value is still served. */
  servingLastGood: boolean;
  at: Date;
}

/** One reference as `GET /api/vault/secrets` shows it: never its value. */
export interface SecretStatus {
  reference: string;
  backend: SecretBackendName;
  resolved: boolean;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
}

interface Entry {
  reference: SecretReference;
  value: string | undefined;
  lastSuccess: Date | undefined;
  lastError: { message: string; at: Date } | undefined;
}

export interface SecretResolverOptions {
  backends: Partial<Record<SecretBackendName, SecretBackend>>;
  logger: Logger;
  metrics?: Pick<Metrics, 'vaultRefreshFailures'> | undefined;
  /** Every reference is read again this often (`vault.refresh_interval_seconds`). */
  refreshIntervalMs: number;
}

/** A startup failure: the references that could not be read, named, with the backends' answers. */
class SecretResolutionError extends Error {
  override name = 'SecretResolutionError';
}

/**
 * The secrets behind config references, in memory only. Read at start, again on an interval and on demand;
 * looked up synchronously at use, so a rotated secret applies from the next request on. A failed read keeps
 * the last good value, logs a warning, counts `gw_vault_refresh_failures_total{backend}` and tells the
 * `onSecretFailure` listeners.
 */
export class SecretResolver implements SecretLookup {
  private readonly entries = new Map<string, Entry>();
  /** Looked-up references not tracked, each warned about once. */
  private readonly untracked = new Set<string>();
  private readonly listeners = new Set<(failure: SecretFailure) => void>();
  private readonly options: SecretResolverOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SecretStatus[]> | undefined;
  private closed = false;
  private readonly closeSteps: Array<() => Promise<void>> = [];

  constructor(options: SecretResolverOptions) {
    this.options = options;
  }

  /**
   * Reads `references` (config text) once and starts the refresh timer. A reference that cannot be read, or
   * names a backend this process has not set up, fails with an error naming it (never its value).
   */
  async start(references: Iterable<string>): Promise<this> {
    for (const text of references) this.track(text);
    await this.refresh();
    const missing = [...this.entries.values()].filter((entry) => entry.value === undefined);
    if (missing.length > 0) {
      await this.close();
      throw new SecretResolutionError(
        `cannot resolve ${missing.length === 1 ? 'secret reference' : 'secret references'} ${missing
          .map((entry) => `'${entry.reference.text}' (${entry.lastError?.message ?? 'no value'})`)
          .join(', ')}`,
      );
    }
    this.timer = setInterval(() => {
      this.refresh().catch(() => {});
    }, this.options.refreshIntervalMs);
    this.timer.unref();
    return this;
  }

  /**
   * The value of a reference from memory. Only the config file's references are read: one the resolver does not
   * track (a stored config the file no longer names, a profile added through the admin API) has no value, and
   * is logged once, so a reference gw reads with its own identity is always one the operator wrote.
   */
  lookup(reference: string): string | undefined {
    const entry = this.entries.get(reference);
    if (entry) return entry.value;
    if (this.untracked.size < MAX_REFERENCES && !this.untracked.has(reference)) {
      this.untracked.add(reference);
      this.options.logger.warn(
        { reference: reference.slice(0, 300) },
        'vault: a reference the config file does not name has no value (add it to the config file)',
      );
    }
    return undefined;
  }

  /** Subscribes to read failures (alerts); returns the unsubscribe. */
  onSecretFailure(listener: (failure: SecretFailure) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads every reference again now (a refresh already under way is shared); answers the status after it. */
  refresh(): Promise<SecretStatus[]> {
    this.running ??= this.read([...this.entries.values()]).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  status(): SecretStatus[] {
    return [...this.entries.values()].map((entry) => ({
      reference: entry.reference.text,
      backend: entry.reference.backend,
      resolved: entry.value !== undefined,
      last_success_at: entry.lastSuccess?.toISOString() ?? null,
      last_error: entry.lastError?.message ?? null,
      last_error_at: entry.lastError?.at.toISOString() ?? null,
    }));
  }

  /** Something to release with the resolver (a subscription). */
  onClose(step: () => Promise<void>): void {
    this.closeSteps.push(step);
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.listeners.clear();
    for (const step of this.closeSteps.splice(0)) await step();
    await this.running?.catch(() => {});
    await Promise.all(Object.values(this.options.backends).map((backend) => backend?.close?.()));
  }

  private track(text: string): void {
    if (this.entries.has(text)) return;
    const reference = parseSecretReference(text);
    if (!reference || reference instanceof Error) {
      throw new SecretResolutionError(reference?.message ?? `'${text}' is not a secret reference`);
    }
    if (this.entries.size >= MAX_REFERENCES) {
      throw new SecretResolutionError(`more than ${MAX_REFERENCES} secret references`);
    }
    this.entries.set(text, { reference, value: undefined, lastSuccess: undefined, lastError: undefined });
  }

  /** One backend read per secret, however many fields of it are referenced. */
  private async read(entries: Entry[]): Promise<SecretStatus[]> {
    const bySecret = new Map<string, Entry[]>();
    for (const entry of entries) {
      const key = `${entry.reference.backend}.${entry.reference.secret}`;
      bySecret.set(key, [...(bySecret.get(key) ?? []), entry]);
    }
    await Promise.all(
      [...bySecret.values()].map(async (group) => {
        const first = group[0] as Entry;
        const backend = this.options.backends[first.reference.backend];
        let content: SecretContent | Error;
        try {
          if (!backend) {
            throw new Error(
              `the ${first.reference.backend} backend is not configured (vault section of the config)`,
            );
          }
          content = await backend.read(first.reference.secret);
        } catch (error) {
          content = error instanceof Error ? error : new Error(String(error));
        }
        for (const entry of group) this.settle(entry, content);
      }),
    );
    return this.status();
  }

  private settle(entry: Entry, content: SecretContent | Error): void {
    const value = content instanceof Error ? content : pickField(content, entry.reference.field);
    const now = new Date();
    if (typeof value === 'string') {
      entry.value = value;
      entry.lastSuccess = now;
      entry.lastError = undefined;
      return;
    }
    entry.lastError = { message: value.message, at: now };
    const { backend, text } = entry.reference;
    this.options.metrics?.vaultRefreshFailures.inc({ backend });
    this.options.logger.warn(
      { reference: text, backend, error: value.message, servingLastGood: entry.value !== undefined },
      'vault: cannot read a secret; keeping the last good value',
    );
    const failure: SecretFailure = {
      reference: text,
      backend,
      error: value.message,
      servingLastGood: entry.value !== undefined,
      at: now,
    };
    for (const listener of this.listeners) {
      try {
        listener(failure);
      } catch (error) {
        this.options.logger.warn({ err: error }, 'vault: an onSecretFailure listener threw');
      }
    }
  }
}

/** The referenced field of a secret: a KV field, or a field of a secret whose text is a JSON object. */
function pickField(content: SecretContent, field: string | undefined): string | Error {
  if (field === undefined) {
    return typeof content === 'string' && content !== ''
      ? content
      : new Error('the secret is empty or not text');
  }
  let fields: unknown = content;
  if (typeof content === 'string') {
    try {
      fields = JSON.parse(content);
    } catch {
      return new Error(`the secret is not a JSON object, so it has no field '${field}'`);
    }
  }
  const value = fields && typeof fields === 'object' ? (fields as Record<string, unknown>)[field] : undefined;
  if (typeof value === 'string' && value !== '') return value;
  return new Error(`the secret has no non-empty text field '${field}'`);
}
