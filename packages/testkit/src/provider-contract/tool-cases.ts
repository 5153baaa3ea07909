import { expect } from 'vitest';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { collectChunks, expectUsage, type Harness } from './harness.ts';

/** Tools: a tool call answered whole, and one whose arguments stream in fragments. */
export function toolCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  harness.contractCase(
    'chatTools',
    'chat with tools: sends tools and answers the tool call',
    harness.lacks('chat'),
    async () => {
      harness.answerWith(upstream.chatTools);
      const result = await adapter.chat!(
        harness.chatInput(PROVIDER_CONTRACT_INPUTS.chatTools),
        harness.context(),
      );
      expectRequest.chatTools(harness.lastRequest());
      const choice = result.choices[0]!;
      expect([null, '']).toContain(choice.message.content);
      expect(choice.message.tool_calls).toHaveLength(1);
      const call = choice.message.tool_calls![0]!;
      expect(call.id).toEqual(expect.any(String));
      expect(call.id.length).toBeGreaterThan(0);
      expect(call.type).toBe('function');
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
      expect(choice.finish_reason).toBe('tool_calls');
      expectUsage(result.usage, 20, 8);
    },
  );

  harness.contractCase(
    'chatStreamTools',
    'chat stream with tools: tool call arguments arrive incrementally',
    harness.lacks('chat_stream'),
    async () => {
      harness.streamWith(upstream.chatStreamTools);
      const chunks = await collectChunks(
        adapter.chatStream!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chatTools), harness.context()),
      );
      const deltas = chunks.flatMap((chunk) =>
        chunk.choices.flatMap((choice) =>
          (choice.delta?.tool_calls ?? []).filter((call) => call.index === 0),
        ),
      );
      const name = deltas.find((delta) => delta.function?.name)?.function?.name;
      expect(name).toBe('get_weather');
      const opening = deltas.find((delta) => delta.id);
      expect(opening?.id?.length).toBeGreaterThan(0);
      expect(opening?.type).toBe('function');
      // Incremental: the opening (id, name) and the argument fragments come in separate chunks.
      const toolCallChunks = chunks.filter((chunk) =>
        chunk.choices.some((choice) => (choice.delta?.tool_calls ?? []).some((call) => call.index === 0)),
      );
      expect(toolCallChunks.length, 'chunks carrying the tool call').toBeGreaterThanOrEqual(2);
      expect(toolCallChunks[0]!.choices[0]!.delta!.tool_calls![0]!.function?.name).toBe('get_weather');
      const argumentsText = deltas.map((delta) => delta.function?.arguments ?? '').join('');
      expect(JSON.parse(argumentsText)).toEqual({ city: 'Paris' });
      const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
      expect(finishes).toContain('tool_calls');
      for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
    },
  );
}
