import { runCacheContract } from '../../testkit/src/index.ts';
import { MemoryCacheBackend } from './index.ts';

runCacheContract({
  name: 'MemoryCacheBackend',
  create: async (settings) => new MemoryCacheBackend(settings),
  skip: {
    'an entry written by one instance is found by another':
      'embedded mode is one process: its one backend is the only instance',
  },
});
