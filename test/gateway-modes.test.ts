// One suite, both modes: every case runs against the embedded gateway in this process and
// against `node src/cluster.ts` (2 ingress and 2 router replicas over gRPC and Redis), each with its own
// fake OpenAI upstreams on loopback. The cases live in test/modes/, one file per area.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { completionCases } from './modes/completion-cases.ts';
import { ADMIN_TOKEN, type Fakes, gatewayConfig, type ModeContext } from './modes/context.ts';
import { failureCases } from './modes/failure-cases.ts';
import { operationsCases } from './modes/operations-cases.ts';
import { streamingCases } from './modes/streaming-cases.ts';

type Launch = (config: GatewayConfigInput) => Promise<LaunchedGateway>;

const MODES: Array<[string, Launch]> = [
  ['embedded', (config) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config) => startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { ingress: 2, router: 2 } }),
  ],
];

describe.each(MODES)('%s mode', (_name, launch) => {
  const state: { fakes?: Fakes; gateway?: LaunchedGateway } = {};
  const mode: ModeContext = {
    get fakes() {
      return state.fakes!;
    },
    get gateway() {
      return state.gateway!;
    },
    get base() {
      return state.gateway!.url;
    },
  };

  beforeAll(async () => {
    state.fakes = {
      primary: await startFakeOpenAi(),
      backup: await startFakeOpenAi(),
      second: await startFakeOpenAi(),
    };
    state.gateway = await launch(gatewayConfig(state.fakes));
  });

  afterAll(async () => {
    await state.gateway?.close();
    await Promise.all(Object.values(state.fakes ?? {}).map((fake) => fake.close()));
  });

  beforeEach(() => {
    for (const fake of Object.values(mode.fakes)) fake.requests.length = 0;
  });

  completionCases(mode);
  streamingCases(mode);
  failureCases(mode);
  operationsCases(mode);
});
