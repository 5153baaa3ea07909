import { expect } from 'vitest';
import type { ProviderContractOptions } from './contract-options.ts';
import { type Harness, OPERATION_METHODS } from './harness.ts';

/** Capabilities: the operations an adapter declares are the ones it implements. */
export function capabilityCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter } = options;
  const operations = new Set(adapter.capabilities.operations);
  harness.contractCase(
    'capabilities',
    'declares exactly the operations it implements',
    undefined,
    async () => {
      for (const [operation, method] of Object.entries(OPERATION_METHODS)) {
        const declared = operations.has(operation as keyof typeof OPERATION_METHODS);
        expect(typeof adapter[method] === 'function', `${operation} declared ${declared}`).toBe(declared);
      }
    },
  );
}
