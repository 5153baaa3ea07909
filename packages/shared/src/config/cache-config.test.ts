import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from './gateway-config.ts';

const failure = (cache: unknown) => {
  try {
    parseGatewayConfig({ cache });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
};

describe('the cache section of the gateway config', () => {
  it('is off by default, with the issue’s defaults', () => {
    expect(parseGatewayConfig({}).cache).toEqual({
      enabled: false,
      types: ['exact', 'semantic'],
      ttl_ms: 300_000,
      threshold: 0.8,
      scope_by_virtual_key: true,
      ignore_model: false,
      max_turns: 3,
      include_tool_results: false,
      max_entries_per_scope: 10_000,
      // Callers without a virtual key are not cached unless the config file says so (issue 25 defect 7).
      anonymous: false,
    });
  });

  it('takes exact matching alone without an embedding model, and semantic matching with one', () => {
    expect(parseGatewayConfig({ cache: { enabled: true, types: ['exact'] } }).cache.enabled).toBe(true);
    const semantic = parseGatewayConfig({
      cache: { enabled: true, embedding: { model: 'openai/text-embedding-3-small', dimensions: 256 } },
    });
    expect(semantic.cache.embedding).toEqual({ model: 'openai/text-embedding-3-small', dimensions: 256 });
  });

  it('names the field of an invalid value', () => {
    expect(failure({ enabled: true })).toMatch(/cache\.embedding: is required for semantic matches/);
    expect(failure({ threshold: 1.5 })).toMatch(/cache\.threshold: /);
    expect(failure({ types: ['fuzzy'] })).toMatch(/cache\.types\[0\]: /);
    expect(failure({ types: [] })).toMatch(/cache\.types: /);
    expect(failure({ ttl_ms: 0 })).toMatch(/cache\.ttl_ms: /);
    expect(failure({ embedding: { model: 'text-embedding-3-small' } })).toMatch(
      /cache\.embedding\.model: must be <provider>\/<model>/,
    );
    expect(failure({ embedding: { model: 'OpenAI/x' } })).toMatch(
      /cache\.embedding\.model: the provider part/,
    );
    expect(failure({ enabled: true, types: ['exact'], max_turn: 3 })).toMatch(/cache: .*max_turn/);
  });
});
