import type { Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { ParsedCompletion } from './parse-request.ts';
import { headerSafe, routingInput } from './routing-input.ts';

const chat = (messages: Message[], params: Record<string, unknown> = {}): ParsedCompletion => ({
  operation: 'chat',
  target: { provider: 'openai', model: 'gpt-4o' },
  fallbacks: [],
  messages,
  params,
  stream: false,
});

describe('routingInput', () => {
  const system: Message = { role: 'system', content: 'You are a careful assistant.' };
  const turn1: Message[] = [system, { role: 'user', content: 'Plan my trip to Lisbon' }];
  const turn3: Message[] = [
    ...turn1,
    { role: 'assistant', content: 'Here is a plan…' },
    { role: 'user', content: [{ type: 'text', text: 'Cheaper hotels?' }] },
  ];

  it('keeps one conversation on one prefix hash across its turns, and tells conversations apart', () => {
    const first = routingInput(chat(turn1), {}, 40).affinity;
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(routingInput(chat(turn3), {}, 80).affinity).toBe(first);
    const other = [system, { role: 'user' as const, content: 'Plan my trip to Porto' }];
    expect(routingInput(chat(other), {}, 40).affinity).not.toBe(first);
    // A remote admission gets it in the JSON it sends.
    expect(JSON.parse(JSON.stringify(routingInput(chat(turn1), {}, 40)))).toMatchObject({ affinity: first });
  });

  it('leaves credentials out of the headers rules read, and counts the prompt before its last message', () => {
    const input = routingInput(
      chat(turn3, { temperature: 0.2 }),
      {
        authorization: 'Bearer sk-gw-secret',
        'x-api-key': 'k',
        cookie: 'c',
        'x-tier': 'gold',
        'x-list': ['a', 'b'],
      },
      100,
    );
    expect(input).toMatchObject({
      requestType: 'chat',
      stream: false,
      headers: { 'x-tier': 'gold', 'x-list': 'a, b' },
      params: { temperature: 0.2 },
    });
    expect(Object.keys(input.headers).sort()).toEqual(['x-list', 'x-tier']);
    // 100 tokens less the last message (4 framing + 4 of text) and the reply's priming (3).
    expect(input.prefixTokens).toBe(89);
  });

  it('has no prefix for a request without messages', () => {
    const input = routingInput(
      {
        operation: 'embeddings',
        target: { provider: 'openai', model: 'e' },
        fallbacks: [],
        input: 'x',
        params: {},
        stream: false,
      },
      {},
      1,
    );
    expect(input.affinity).toBeUndefined();
    expect(input.prefixTokens).toBeUndefined();
  });

  it('writes a rule name as a header value: printable ASCII as is, anything else percent-encoded', () => {
    expect(headerSafe('gold-tier 2')).toBe('gold-tier 2');
    expect(headerSafe('règle\n')).toBe('r%C3%A8gle%0A');
  });
});
