import { afterAll } from 'vitest';
import { deleteRedisKeys, runCacheContract, testRedisPrefix } from '../../../testkit/src/index.ts';
import { RedisCacheBackend } from './index.ts';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = testRedisPrefix();

runCacheContract({
  name: 'RedisCacheBackend',
  create: (settings) => RedisCacheBackend.connect({ url, prefix, ...settings }),
});

afterAll(() => deleteRedisKeys(url, prefix));
