import { describe, expect, it } from 'vitest';
import { surfaceTarget } from './surface-target.ts';

describe('surfaceTarget', () => {
  it.each([
    ['claude-opus-4-7', 'anthropic', { provider: 'anthropic', model: 'claude-opus-4-7' }],
    ['openai/gpt-4o', 'anthropic', { provider: 'openai', model: 'gpt-4o' }],
    [
      'anthropic.claude-3-5-sonnet-20240620-v1:0',
      'bedrock',
      { provider: 'bedrock', model: 'anthropic.claude-3-5-sonnet-20240620-v1:0' },
    ],
    [
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude',
      'bedrock',
      {
        provider: 'bedrock',
        model: 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude',
      },
    ],
    ['groq/meta-llama/llama-4', 'openai', { provider: 'groq', model: 'meta-llama/llama-4' }],
  ])('%s on a %s surface', (model, surface, expected) => {
    expect(surfaceTarget(model, surface)).toEqual(expected);
  });

  it('maps aliases and refuses an empty model', () => {
    expect(surfaceTarget('vertex_ai/gemini-2.5-pro', 'openai', { aliases: { vertex_ai: 'vertex' } })).toEqual(
      {
        provider: 'vertex',
        model: 'gemini-2.5-pro',
      },
    );
    expect(() => surfaceTarget('', 'openai')).toThrow('model: is required');
  });
});
