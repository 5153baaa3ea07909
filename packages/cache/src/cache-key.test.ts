import { describe, expect, it } from 'vitest';
import {
  cacheKeys,
  callerKeyHash,
  canonicalJson,
  contextHash,
  exactHash,
  semanticEligibility,
} from './index.ts';

const question = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: 'What is 2 + 2?' },
  ],
  params: { temperature: 0, max_tokens: 20 },
};

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order, drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"z":1}]},"b":1}',
    );
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson('é"\n')).toBe(JSON.stringify('é"\n'));
  });
});

describe('cacheKeys', () => {
  it('is deterministic whatever the key order, as 64 hex digits', () => {
    const reordered = {
      params: { max_tokens: 20, temperature: 0 },
      messages: question.messages.map((message) => ({ content: message.content, role: message.role })),
      model: 'gpt-4o-mini',
      provider: 'openai',
    };
    expect(cacheKeys(reordered)).toEqual(cacheKeys(question));
    expect(cacheKeys(question).exact).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with the provider, the model, a message, a tool, tool_choice or an output param', () => {
    const base = cacheKeys(question).exact;
    const variants = [
      { ...question, provider: 'azure' },
      { ...question, model: 'gpt-4o' },
      { ...question, messages: [...question.messages, { role: 'user' as const, content: 'and 3 + 3?' }] },
      {
        ...question,
        params: { ...question.params, tools: [{ type: 'function', function: { name: 'add' } }] },
      },
      { ...question, params: { ...question.params, tool_choice: 'required' } },
      { ...question, params: { ...question.params, temperature: 1 } },
      { ...question, params: { ...question.params, seed: 7 } },
      { ...question, params: { ...question.params, reasoning_effort: 'high' } },
      { ...question, params: { ...question.params, response_format: { type: 'json_object' } } },
      { ...question, params: { ...question.params, stop: ['\n'] } },
      { ...question, params: { ...question.params, n: 2 } },
    ];
    const hashes = variants.map((variant) => cacheKeys(variant).exact);
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
  });

  it('leaves out what does not change the answer: stream, stream_options, user, metadata', () => {
    const streamed = {
      ...question,
      params: {
        ...question.params,
        stream: true,
        stream_options: { include_usage: true },
        user: 'u-1',
        metadata: {},
      },
    };
    expect(cacheKeys(streamed)).toEqual(cacheKeys(question));
  });

  it('leaves out provider and model when configured to', () => {
    const other = { ...question, provider: 'anthropic', model: 'claude-haiku' };
    expect(cacheKeys(other, { ignoreModel: true })).toEqual(cacheKeys(question, { ignoreModel: true }));
    expect(cacheKeys(other)).not.toEqual(cacheKeys(question));
  });

  it('uses the caller’s key instead of the computed hash, and keeps the context', () => {
    const keyed = cacheKeys(question, { callerKey: 'faq-42' });
    expect(keyed.exact).toBe(callerKeyHash('faq-42'));
    expect(cacheKeys({ ...question, model: 'gpt-4o' }, { callerKey: 'faq-42' }).exact).toBe(keyed.exact);
    expect(keyed.context).toBe(cacheKeys(question).context);
  });

  it('computes either hash alone as cacheKeys does (a lookup without a semantic match skips the context)', () => {
    const options = { embeddingModel: 'openai/text-embedding-3-small', ignoreModel: true };
    expect(exactHash(question, options)).toBe(cacheKeys(question, options).exact);
    expect(contextHash(question, options)).toBe(cacheKeys(question, options).context);
    expect(exactHash(question, { callerKey: 'faq-42' })).toBe(callerKeyHash('faq-42'));
  });

  it('gives one context to conversations that differ in their turns only', () => {
    const other = {
      ...question,
      messages: [question.messages[0]!, { role: 'user' as const, content: 'Hi' }],
    };
    expect(cacheKeys(other).context).toBe(cacheKeys(question).context);
    const instructed = {
      ...question,
      messages: [{ role: 'system' as const, content: 'Be verbose.' }, question.messages[1]!],
    };
    expect(cacheKeys(instructed).context).not.toBe(cacheKeys(question).context);
    expect(cacheKeys(question, { embeddingModel: 'a' }).context).not.toBe(
      cacheKeys(question, { embeddingModel: 'b' }).context,
    );
  });
});

describe('semanticEligibility', () => {
  it('embeds the turns as role-prefixed lines, without the instructions', () => {
    expect(semanticEligibility(question.messages)).toEqual({ eligible: true, text: 'user: What is 2 + 2?' });
    const parts = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'a' },
          { type: 'text' as const, text: 'b' },
        ],
      },
    ];
    expect(semanticEligibility(parts)).toEqual({ eligible: true, text: 'user: a\nb' });
  });

  it('refuses long conversations, tool results and images by default', () => {
    const turn = { role: 'user' as const, content: 'again' };
    expect(semanticEligibility([turn, turn, turn, turn])).toEqual({
      eligible: false,
      reason: 'too_many_turns',
    });
    expect(semanticEligibility([turn, turn, turn, turn], { maxTurns: 4 }).eligible).toBe(true);
    const withTool = [
      turn,
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ type: 'function' as const, id: 'c1', function: { name: 'now', arguments: '{}' } }],
      },
      { role: 'tool' as const, content: '12:00', tool_call_id: 'c1' },
    ];
    expect(semanticEligibility(withTool)).toEqual({ eligible: false, reason: 'tool_results' });
    expect(semanticEligibility(withTool, { allowToolResults: true })).toEqual({
      eligible: true,
      text: 'user: again\nassistant: now({})\ntool: 12:00',
    });
    const image = {
      role: 'user' as const,
      content: [{ type: 'image_url' as const, image_url: { url: 'data:,' } }],
    };
    expect(semanticEligibility([image])).toEqual({ eligible: false, reason: 'non_text_content' });
    expect(semanticEligibility([question.messages[0]!])).toEqual({ eligible: false, reason: 'no_turns' });
  });
});
