// Idle sockets cannot hold the connection cap (issue 25): past GW_MAX_CONNECTIONS idle connections are closed,
// oldest first, so /health and a chat get in; in both modes (the cluster's ingress reads the variables, the
// embedded gateway is given the same limits). The server's own cases: packages/shared/src/server-limits.test.ts.
import { connect, type Socket } from 'node:net';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './support/http.ts';

const CAP = 24;

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, limits: { maxConnections: CAP } })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, env: { GW_MAX_CONNECTIONS: String(CAP) }, readyTimeoutMs: 60_000 }),
  ],
] as const;

describe.each(MODES)('connections held by idle sockets (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: {
        openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
      },
    });
  }, 90_000);
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await gateway?.close();
    await fake?.close();
  });

  it('answers /health and a chat past more idle sockets than the cap', async () => {
    const { port } = new URL(gateway.url);
    for (let index = 0; index < CAP * 2; index++) {
      const socket = connect({ host: '127.0.0.1', port: Number(port) });
      socket.on('error', () => {});
      sockets.push(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await get(`${gateway.url}/health`)).status).toBe(200);
    const chat = await post(`${gateway.url}/v1/chat/completions`, {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(chat.status).toBe(200);
    // The oldest idle ones made room.
    expect(
      sockets.filter((socket) => socket.destroyed || socket.readyState === 'closed').length,
    ).toBeGreaterThan(0);
  });
});
