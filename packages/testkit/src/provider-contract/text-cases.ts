import { expect } from 'vitest';
import type { ProviderContractOptions } from './contract-options.ts';
import { collectChunks, expectUsage, type Harness } from './harness.ts';

/** Text completion, whole and streamed. */
export function textCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  harness.contractCase('text', 'text: completes a prompt', harness.lacks('text'), async () => {
    if (!upstream.text) throw new Error('the adapter declares text: give upstream.text');
    const sent = harness.answerWith(upstream.text);
    const result = await adapter.text!(harness.textInput(), harness.context());
    expectRequest.text?.(harness.lastRequest());
    expect(result.choices[0]!.text).toBe('Once upon');
    expect(result.choices[0]!.finish_reason).toBe('stop');
    expectUsage(result.usage, 3, 2);
    if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
  });

  harness.contractCase(
    'textStream',
    'text stream: yields text_completion chunks and usage',
    harness.lacks('text_stream') ??
      (upstream.textStream || adapter.capabilities.textViaChat
        ? undefined
        : 'no upstream.textStream fixture given'),
    async () => {
      const native = upstream.textStream !== undefined;
      harness.streamWith(upstream.textStream ?? upstream.chatStream);
      const chunks = await collectChunks(adapter.textStream!(harness.textInput(), harness.context()));
      expectRequest.textStream?.(harness.lastRequest());
      const text = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.text ?? '')).join('');
      expect(text).toBe(native ? 'Once upon' : 'Hello thére');
      for (const chunk of chunks) expect(chunk.object).toBe('text_completion');
      const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
      expect(finishes).toContain('stop');
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      if (native) expectUsage(last.usage, 3, 2);
      else expectUsage(last.usage, 10, 5);
    },
  );
}
