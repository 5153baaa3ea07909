import { describe } from 'vitest';
import { billedUsageCases } from './billed-usage-cases.ts';
import { capabilityCases } from './capability-cases.ts';
import { chatCases } from './chat-cases.ts';
import type { ProviderContractOptions } from './contract-options.ts';
import { embeddingsCases } from './embeddings-cases.ts';
import { errorCases } from './error-cases.ts';
import { createHarness } from './harness.ts';
import { streamCases } from './stream-cases.ts';
import { textCases } from './text-cases.ts';
import { toolCases } from './tool-cases.ts';

export * from './contract-options.ts';
export { openAiRequestExpectations } from './openai-request-expectations.ts';

/** The suite by concern; each group registers its cases on the shared harness. */
const CASE_GROUPS = [
  capabilityCases,
  chatCases,
  toolCases,
  errorCases,
  streamCases,
  textCases,
  embeddingsCases,
  billedUsageCases,
];

/**
 * The behaviour every provider adapter owes the router, against the recording fake upstream answering the
 * provider's true wire format. Each adapter runs it from a short test file with its own fixtures; a case it
 * does not run is skipped with a stated reason (`skip`, keyed by case name).
 */
export function runProviderContract(options: ProviderContractOptions): void {
  describe(`provider contract: ${options.name}`, () => {
    const harness = createHarness(options);
    for (const cases of CASE_GROUPS) cases(harness, options);
  });
}
