// RedisCacheBackend on a 3-master Redis Cluster (real redis-server processes started here): the whole cache
// contract, so every script, MGET and notice works when scopes hash to different nodes.
import { afterAll, beforeAll } from 'vitest';
import {
  type RedisTopology,
  runCacheContract,
  startRedisCluster,
  testRedisPrefix,
} from '../../../testkit/src/index.ts';
import { RedisCacheBackend } from './index.ts';

const prefix = testRedisPrefix();
let cluster: RedisTopology;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 60_000);
afterAll(() => cluster?.stop());

runCacheContract({
  name: 'RedisCacheBackend on Redis Cluster',
  create: (settings) => RedisCacheBackend.connect({ url: cluster.url, prefix, ...settings }),
});
