import type { EmbeddingsInput } from '@gw/router/testing';
import { expect } from 'vitest';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import type { Harness } from './harness.ts';

/** Embeddings: every input embedded, in order. */
export function embeddingsCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  harness.contractCase(
    'embeddings',
    'embeddings: embeds every input in order',
    harness.lacks('embeddings'),
    async () => {
      if (!upstream.embeddings) throw new Error('the adapter declares embeddings: give upstream.embeddings');
      const sent = harness.answerWith(upstream.embeddings);
      const input: EmbeddingsInput = {
        model: options.model,
        input: [...PROVIDER_CONTRACT_INPUTS.embeddings.input],
        params: {},
      };
      const result = await adapter.embeddings!(input, harness.context());
      expectRequest.embeddings?.(harness.lastRequest());
      expect(result.data.map((item) => item.index)).toEqual([0, 1]);
      expect(result.data.map((item) => item.embedding)).toEqual([
        [0.1, 0.2],
        [0.3, 0.4],
      ]);
      expect(result.usage.prompt_tokens).toBe(2);
      if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
    },
  );
}
