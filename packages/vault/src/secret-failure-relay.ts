import type { Store } from '@gw/shared/store';
import { z } from 'zod';
import type { SecretFailure } from './secret-resolver.ts';

/** Where every process's failed reads meet (cluster mode), for the alert evaluator. */
const FAILURE_CHANNEL = 'vault.failures';

const failureSchema = z.object({
  reference: z.string().min(1).max(512),
  backend: z.enum(['vault', 'aws-sm', 'gcp-sm', 'azure-kv']),
  error: z.string().max(1_000),
  servingLastGood: z.boolean(),
  /** An ISO string once it crossed the store. */
  at: z.coerce.date(),
});

/** Listens to failed reads: a resolver, or every resolver of a cluster through the store. */
export interface SecretFailureSource {
  onSecretFailure(listener: (failure: SecretFailure) => void): () => void;
}

/** Publishes a resolver's failures on the store (at most once, like any notice there); answers the unsubscribe. */
export function forwardSecretFailures(
  resolver: SecretFailureSource,
  store: Store,
  onError: (error: unknown) => void,
): () => void {
  return resolver.onSecretFailure((failure) => {
    store.publish(FAILURE_CHANNEL, JSON.stringify(failure)).catch(onError);
  });
}

/** The failures every resolver following the store forwards, as one source (what is not a failure is dropped). */
export async function followSecretFailures(
  store: Store,
): Promise<SecretFailureSource & { close(): Promise<void> }> {
  const listeners = new Set<(failure: SecretFailure) => void>();
  const unsubscribe = await store.subscribe(FAILURE_CHANNEL, (message) => {
    let value: unknown;
    try {
      value = JSON.parse(message);
    } catch {
      return;
    }
    const failure = failureSchema.safeParse(value);
    if (failure.success) for (const listener of listeners) listener(failure.data);
  });
  return {
    onSecretFailure(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: unsubscribe,
  };
}
