import { expect } from 'vitest';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { expectUpstreamFailure, expectUsage, type Harness, OPERATION_METHODS } from './harness.ts';

/** Chat cases: capabilities, a whole answer, tools, vision and an upstream error. */
export function chatCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
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

  harness.contractCase(
    'error',
    'error: an upstream 400 becomes a GatewayError with its status and message',
    harness.lacks('chat'),
    async () => {
      harness.answerWith(upstream.error, 400);
      await expectUpstreamFailure(
        adapter.chat!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
      );
    },
  );
}
