import { modelAliasSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { resolveAliases } from './model-aliases.ts';

const alias = (input: unknown) => modelAliasSchema.parse(input);

const GATEWAY = [
  alias({ name: 'claude-*', targets: [{ model: 'openai/gpt-4o' }] }),
  alias({ name: 'claude-sonnet-*', targets: [{ model: 'openai/gpt-5' }] }),
  alias({ name: 'claude-sonnet-4-5', targets: [{ model: 'anthropic/claude-sonnet-4-5-20250929' }] }),
  alias({ name: 'bedrock/*', targets: [{ model: 'anthropic/claude-opus-4-7' }] }),
  alias({
    name: 'fast',
    targets: [
      { model: 'openai/gpt-4o-mini', weight: 3 },
      { model: 'groq/llama-3.3-70b', weight: 1 },
    ],
    fallbacks: ['anthropic/claude-haiku-4-5', 'openai/gpt-4o-mini'],
  }),
];

const resolve = (targets: Array<{ provider: string; model: string }>, random = 0) =>
  resolveAliases(targets, { gateway: GATEWAY }, () => random).map(
    (target) => `${target.provider}/${target.model}`,
  );

describe('model aliases', () => {
  it('prefers an exact name, then the longest pattern; a name with / matches provider/model', () => {
    expect(resolve([{ provider: 'anthropic', model: 'claude-sonnet-4-5' }])).toEqual([
      'anthropic/claude-sonnet-4-5-20250929',
    ]);
    expect(resolve([{ provider: 'anthropic', model: 'claude-sonnet-4-6' }])).toEqual(['openai/gpt-5']);
    expect(resolve([{ provider: 'anthropic', model: 'claude-haiku-4-5' }])).toEqual(['openai/gpt-4o']);
    expect(resolve([{ provider: 'bedrock', model: 'anthropic.claude-v2' }])).toEqual([
      'anthropic/claude-opus-4-7',
    ]);
    expect(resolve([{ provider: 'openai', model: 'gpt-4o' }])).toEqual(['openai/gpt-4o']);
  });

  it('picks the first target by weight, the rest by weight, then fallbacks without duplicates', () => {
    expect(resolve([{ provider: '', model: 'fast' }], 0.1)).toEqual([
      'openai/gpt-4o-mini',
      'groq/llama-3.3-70b',
      'anthropic/claude-haiku-4-5',
    ]);
    expect(resolve([{ provider: '', model: 'fast' }], 0.9)).toEqual([
      'groq/llama-3.3-70b',
      'openai/gpt-4o-mini',
      'anthropic/claude-haiku-4-5',
    ]);
  });

  it('resolves the request’s fallbacks too, and a key’s alias before the gateway’s', () => {
    const key = [alias({ name: 'fast', targets: [{ model: 'mistral/mistral-small' }] })];
    expect(
      resolveAliases(
        [
          { provider: '', model: 'fast' },
          { provider: 'anthropic', model: 'claude-haiku-4-5' },
        ],
        { key, gateway: GATEWAY },
        () => 0,
      ).map((target) => `${target.provider}/${target.model}`),
    ).toEqual(['mistral/mistral-small', 'openai/gpt-4o']);
  });

  it('treats pattern characters other than * literally', () => {
    const literal = [alias({ name: 'a.b+(c)*', targets: [{ model: 'openai/x' }] })];
    const names = (model: string) =>
      resolveAliases([{ provider: '', model }], { gateway: literal }, () => 0).map((target) => target.model);
    expect(names('a.b+(c)-2')).toEqual(['x']);
    expect(names('aXb+(c)-2')).toEqual(['aXb+(c)-2']);
    expect(names('a.bb(c)-2')).toEqual(['a.bb(c)-2']);
  });
});
