import { MemoryStore } from '@gw/shared/store';
import { waitFor } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { followSecretFailures, forwardSecretFailures } from './secret-failure-relay.ts';
import type { SecretFailure } from './secret-resolver.ts';

describe('secret failure relay', () => {
  it("carries a resolver's failures through the store to the evaluator's process, and drops what is not one", async () => {
    const store = await MemoryStore.open();
    const listeners = new Set<(failure: SecretFailure) => void>();
    const resolver = {
      onSecretFailure(listener: (failure: SecretFailure) => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const source = await followSecretFailures(store);
    const received: SecretFailure[] = [];
    const stopListening = source.onSecretFailure((failure) => received.push(failure));
    const errors: unknown[] = [];
    const stopForwarding = forwardSecretFailures(resolver, store, (error) => errors.push(error));
    try {
      const failure: SecretFailure = {
        reference: 'aws-sm.prod/openai',
        backend: 'aws-sm',
        error: 'AccessDeniedException',
        servingLastGood: true,
        at: new Date(1),
      };
      for (const listener of listeners) listener(failure);
      await store.publish('vault.failures', '{"not":"a failure"}');
      await store.publish('vault.failures', 'not json');
      for (const listener of listeners) listener({ ...failure, at: new Date(2) });
      await waitFor(() => received.length === 2, { what: 'two failures' });
      expect(received).toEqual([failure, { ...failure, at: new Date(2) }]);
      expect(errors).toEqual([]);
      stopForwarding();
      expect(listeners.size).toBe(0);
    } finally {
      stopListening();
      await source.close();
      await store.close();
    }
  });
});
