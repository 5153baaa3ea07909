// The response cache (issue 13) in both modes: the embedded gateway (memory backend) and `node src/cluster.ts`
// with two ingress replicas sharing entries through Redis. A fake chat upstream and a fake embeddings upstream
// whose vectors the test sets; cases live in test/cache/, one file per area. Unit tests of the stage (TTL on a
// controllable clock, what is never stored) are beside it: services/ingress/src/pipeline/cache-stage.test.ts.
import {
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeEmbeddings,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { type CacheContext, type CacheFakes, cacheConfig } from './cache/context.ts';
import { matchCases } from './cache/match-cases.ts';
import { operationsCases } from './cache/operations-cases.ts';
import { streamCases } from './cache/stream-cases.ts';

const ADMIN_TOKEN = 'cache-admin';

const MODES = [
  ['embedded', (config) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { ingress: 2 }, readyTimeoutMs: 60_000 }),
  ],
] as const satisfies ReadonlyArray<
  readonly [string, (config: ReturnType<typeof cacheConfig>) => Promise<LaunchedGateway>]
>;

describe.each(MODES)('semantic cache (%s)', (_mode, launch) => {
  const state: { fakes?: CacheFakes; gateway?: LaunchedGateway } = {};
  const context: CacheContext = {
    get fakes() {
      return state.fakes!;
    },
    get gateway() {
      return state.gateway!;
    },
    get reader() {
      return state.gateway!.urls.at(-1)!;
    },
  };

  beforeAll(async () => {
    state.fakes = { chat: await startFakeOpenAi(), embeddings: await startFakeEmbeddings() };
    state.gateway = await launch(cacheConfig(state.fakes));
  });
  afterAll(async () => {
    await state.gateway?.close();
    await Promise.all([state.fakes?.chat.close(), state.fakes?.embeddings.close()]);
  });
  beforeEach(() => {
    state.fakes!.chat.requests.length = 0;
    state.fakes!.embeddings.requests.length = 0;
  });

  matchCases(context);
  streamCases(context);
  operationsCases(context);
});
