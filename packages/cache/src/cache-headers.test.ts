import { describe, expect, it } from 'vitest';
import { wholeAnswer } from '../../testkit/src/cache-fixtures.ts';
import {
  CACHE_REQUEST_HEADERS,
  CACHE_RESPONSE_HEADERS,
  cacheResultHeaders,
  parseCacheHeaders,
} from './index.ts';

describe('parseCacheHeaders', () => {
  it('reads every header the cache knows', () => {
    expect(
      parseCacheHeaders({
        [CACHE_REQUEST_HEADERS.key]: 'faq-1',
        [CACHE_REQUEST_HEADERS.ttl]: '5m',
        [CACHE_REQUEST_HEADERS.threshold]: '0.92',
        [CACHE_REQUEST_HEADERS.type]: 'semantic',
        [CACHE_REQUEST_HEADERS.noStore]: 'true',
      }),
    ).toEqual({ callerKey: 'faq-1', ttlMs: 300_000, threshold: 0.92, types: ['semantic'], noStore: true });
    expect(parseCacheHeaders({})).toEqual({ noStore: false });
    expect(parseCacheHeaders({ 'x-gw-cache-ttl': '30' }).ttlMs).toBe(30_000);
    expect(parseCacheHeaders({ 'x-gw-cache-ttl': '250ms' }).ttlMs).toBe(250);
    expect(parseCacheHeaders({ 'x-gw-cache-threshold': '1' }).threshold).toBe(1);
  });

  it('answers a malformed value with a 400 that names the header', () => {
    const cases: Array<[string, string | string[]]> = [
      ['x-gw-cache-ttl', 'forever'],
      ['x-gw-cache-ttl', '0'],
      ['x-gw-cache-threshold', '1.5'],
      ['x-gw-cache-threshold', '-0.1'],
      ['x-gw-cache-type', 'fuzzy'],
      ['x-gw-cache-no-store', 'yes'],
      ['x-gw-cache-key', ['a', 'b']],
    ];
    for (const [name, value] of cases) {
      expect(() => parseCacheHeaders({ [name]: value })).toThrow(
        expect.objectContaining({ status: 400, param: name }),
      );
    }
  });
});

describe('cacheResultHeaders', () => {
  it('says hit or miss, and on a hit the type, similarity and entry id', () => {
    expect(cacheResultHeaders(undefined)).toEqual({ [CACHE_RESPONSE_HEADERS.status]: 'miss' });
    const entry = {
      id: 'e1',
      scope: 's',
      hash: 'a'.repeat(64),
      createdAt: 0,
      expiresAt: 1,
      provider: 'openai',
      model: 'gpt-4o-mini',
      answer: wholeAnswer('x'),
    };
    expect(cacheResultHeaders({ hit: 'semantic', entry, similarity: 0.91234 })).toEqual({
      'x-gw-cache': 'hit',
      'x-gw-cache-hit-type': 'semantic',
      'x-gw-cache-similarity': '0.9123',
      'x-gw-cache-entry-id': 'e1',
    });
  });
});
