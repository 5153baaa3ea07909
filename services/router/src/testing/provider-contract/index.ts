import { describe } from 'vitest';
import { chatCases } from './chat-cases.ts';
import type { ProviderContractOptions } from './contract-options.ts';
import { createHarness } from './harness.ts';
import { streamCases } from './stream-cases.ts';
import { textAndEmbeddingsCases } from './text-and-embeddings-cases.ts';

export * from './contract-options.ts';

/**
 * The behaviour every provider adapter owes the router, against the recording fake upstream answering the
 * provider's true wire format. Each adapter runs it from a short test file with its own fixtures; a case it
 * does not run is skipped with a stated reason.
 */
export function runProviderContract(options: ProviderContractOptions): void {
  describe(`provider contract: ${options.name}`, () => {
    const harness = createHarness(options);
    chatCases(harness, options);
    streamCases(harness, options);
    textAndEmbeddingsCases(harness, options);
  });
}
