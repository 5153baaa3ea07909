import { expect } from 'vitest';
import {
  type BilledUsageAnswers,
  PROVIDER_CONTRACT_INPUTS,
  type ProviderContractCase,
  type ProviderContractOptions,
} from './contract-options.ts';
import { collectChunks, type Harness } from './harness.ts';

/** One billed usage checked whole and streamed: the answers, the cases' names and what they check. */
function billedPair(
  harness: Harness,
  options: ProviderContractOptions,
  pair: {
    answers: BilledUsageAnswers | undefined;
    cases: readonly [whole: ProviderContractCase, stream: ProviderContractCase];
    /** The fixture's place in the options, for the skip reason. */
    given: string;
    what: string;
  },
): void {
  const { adapter } = options;
  const { answers } = pair;
  harness.contractCase(
    pair.cases[0],
    `billed usage: ${pair.what} of a whole answer are mapped`,
    harness.lacks('chat') ?? (answers?.chat ? undefined : `no ${pair.given}.chat answer given`),
    async () => {
      harness.answerWith(answers!.chat!);
      const result = await adapter.chat!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context());
      expect(result.usage).toEqual(answers!.expected);
    },
  );

  harness.contractCase(
    pair.cases[1],
    `billed usage: ${pair.what} of a stream are mapped`,
    harness.lacks('chat_stream') ??
      (answers?.chatStream ? undefined : `no ${pair.given}.chatStream answer given`),
    async () => {
      harness.streamWith(answers!.chatStream!);
      const chunks = await collectChunks(
        adapter.chatStream!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
      );
      const usages = chunks.flatMap((chunk) => (chunk.usage ? [chunk.usage] : []));
      expect(usages.at(-1)).toEqual(answers!.expected);
    },
  );
}

/**
 * Usage as billed: the provider's cached, cache-write and reasoning counts reach `Usage` where pricing reads
 * them (docs/pricing.md), whole and streamed, so every token is charged at the price the provider bills it; and
 * so do image and audio tokens, where the provider reports them apart.
 */
export function billedUsageCases(harness: Harness, options: ProviderContractOptions): void {
  billedPair(harness, options, {
    answers: options.billedUsage,
    cases: ['billedUsage', 'billedUsageStream'],
    given: 'billedUsage',
    what: 'cached, cache-write and reasoning tokens',
  });
  billedPair(harness, options, {
    answers: options.billedUsage.images,
    cases: ['billedImages', 'billedImagesStream'],
    given: 'billedUsage.images',
    what: 'image and audio tokens in and out',
  });
}
