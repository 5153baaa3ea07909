import { expect } from 'vitest';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { collect, type Harness } from './harness.ts';

/**
 * Usage as billed: the provider's cached, cache-write and reasoning counts reach `Usage` where pricing reads
 * them (docs/pricing.md), whole and streamed, so every token is charged at the price the provider bills it.
 */
export function billedUsageCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, billedUsage } = options;
  const { chat, chatStream } = billedUsage;
  harness.contractCase(
    'billedUsage',
    'billed usage: cached, cache-write and reasoning tokens of a whole answer are mapped',
    harness.lacks('chat') ?? (chat ? undefined : 'no billedUsage.chat answer given'),
    async () => {
      harness.answerWith(chat!);
      const result = await adapter.chat!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context());
      expect(result.usage).toEqual(billedUsage.expected);
    },
  );

  harness.contractCase(
    'billedUsageStream',
    'billed usage: cached, cache-write and reasoning tokens of a stream are mapped',
    harness.lacks('chat_stream') ?? (chatStream ? undefined : 'no billedUsage.chatStream answer given'),
    async () => {
      harness.streamWith(chatStream!);
      const chunks = await collect(
        adapter.chatStream!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
      );
      const usages = chunks.flatMap((chunk) => (chunk.usage ? [chunk.usage] : []));
      expect(usages.at(-1)).toEqual(billedUsage.expected);
    },
  );
}
