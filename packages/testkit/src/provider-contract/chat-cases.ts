import { expect } from 'vitest';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { expectUsage, type Harness } from './harness.ts';

/** Chat: a whole answer, and a request with images. */
export function chatCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  harness.contractCase(
    'chat',
    'chat: sends the request and normalises the answer',
    harness.lacks('chat'),
    async () => {
      const sent = harness.answerWith(upstream.chat);
      const result = await adapter.chat!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context());
      expectRequest.chat(harness.lastRequest());
      expect(result.choices).toHaveLength(1);
      expect(result.choices[0]!.message.role).toBe('assistant');
      expect(result.choices[0]!.message.content).toBe('Hello there');
      expect(result.choices[0]!.finish_reason).toBe('stop');
      expectUsage(result.usage, 10, 5);
      expect(typeof result.id).toBe('string');
      expect(typeof result.created).toBe('number');
      expect(result.raw).toBeDefined();
      if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
    },
  );

  harness.contractCase(
    'vision',
    'vision: sends text and image parts',
    harness.lacks('chat') ??
      (!adapter.capabilities.vision ? 'capabilities.vision is false' : undefined) ??
      (!expectRequest.vision ? 'no expectRequest.vision given' : undefined),
    async () => {
      harness.answerWith(upstream.chat);
      const result = await adapter.chat!(
        harness.chatInput(PROVIDER_CONTRACT_INPUTS.vision),
        harness.context(),
      );
      expectRequest.vision!(harness.lastRequest());
      expect(result.choices[0]!.message.content).toBe('Hello there');
    },
  );
}
