// Neither idle sockets (issue 25) nor requests stuck mid-body (issue 42) can hold the connection cap: past
// GW_MAX_CONNECTIONS idle connections are closed, oldest first, then the connection whose body has gone longest
// without a byte, so /health and a chat get in; a body that stops is cut with 408 (GW_BODY_PROGRESS_MS/_BYTES),
// one that keeps coming slowly is served. In both modes (the cluster's ingress reads the variables, the embedded
// gateway is given the same limits). The server's own cases: packages/shared/src/server-limits.test.ts.
import { connect, type Socket } from 'node:net';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './support/http.ts';

const CAP = 24;
/** One address's share of the cap: nine tenths (GW_MAX_CONNECTIONS_PER_ADDRESS unset). */
const SHARE = Math.floor(CAP * 0.9);
/** Long enough that only making room, not the progress bound, can let a request in while bodies are stuck. */
const PROGRESS_MS = 3_000;
const PROGRESS_BYTES = 256;

const MODES = [
  [
    'embedded',
    (config: GatewayConfigInput) =>
      startEmbedded({
        config,
        limits: { maxConnections: CAP, bodyProgressMs: PROGRESS_MS, bodyProgressBytes: PROGRESS_BYTES },
      }),
  ],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({
        config,
        env: {
          GW_MAX_CONNECTIONS: String(CAP),
          GW_BODY_PROGRESS_MS: String(PROGRESS_MS),
          GW_BODY_PROGRESS_BYTES: String(PROGRESS_BYTES),
        },
        readyTimeoutMs: 60_000,
      }),
  ],
] as const;

/** A raw connection from `localAddress` (any of 127.0.0.0/8); `closed` resolves with all it received. */
function open(url: string, localAddress = '127.0.0.1', write?: string) {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(url).port), localAddress });
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    received += text;
  });
  socket.on('error', () => {});
  if (write !== undefined) socket.write(write);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  return { socket, closed };
}

/** A chat request's head, its body sent in chunks; the first declares 2^64 - 1 bytes and never ends. */
const STUCK =
  'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  'Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{"model":';

describe.each(MODES)('connections held by idle sockets and stuck bodies (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let sockets: Socket[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: {
        openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
      },
    });
  }, scaled(90_000));
  afterEach(async () => {
    // Each case starts with the cap free again.
    for (const socket of sockets) socket.destroy();
    sockets = [];
    fake.requests.length = 0;
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const chat = (content: string) =>
    post(`${gateway.url}/v1/chat/completions`, {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content }],
    });
  const contents = () =>
    fake.requests.map(
      (request) => (request.body as { messages: Array<{ content: string }> }).messages[0]!.content,
    );
  const closedCount = () =>
    sockets.filter((socket) => socket.destroyed || socket.readyState === 'closed').length;

  it('answers /health and a chat past more idle sockets than the cap', async () => {
    for (let index = 0; index < CAP * 2; index++) sockets.push(open(gateway.url).socket);
    // Each one past its address's share took the place of the oldest idle one.
    await waitFor(() => closedCount() === CAP * 2 - SHARE, {
      timeoutMs: 20_000,
      what: 'the oldest idle sockets closed',
    });
    expect((await get(`${gateway.url}/health`)).status).toBe(200);
    expect((await chat('hi')).status).toBe(200);
    expect(contents()).toEqual(['hi']);
  });

  it('answers /health and a chat from a third address while two others hold the cap with stuck bodies', async () => {
    // Twenty from each of two addresses (each within its share, nine tenths of the cap): more than the cap.
    const stuck = Array.from({ length: 40 }, (_, index) =>
      open(gateway.url, index % 2 === 0 ? '127.0.0.2' : '127.0.0.3', STUCK),
    );
    sockets.push(...stuck.map(({ socket }) => socket));
    await waitFor(() => closedCount() === 40 - CAP, {
      timeoutMs: 20_000,
      what: 'the cap full of stuck bodies',
    });
    expect((await get(`${gateway.url}/health`)).status).toBe(200);
    const answer = await chat('past the stuck ones');
    expect(answer.status).toBe(200);
    expect(contents()).toEqual(['past the stuck ones']);
    // A stuck one made room for the third address's connection.
    expect(closedCount()).toBeGreaterThan(40 - CAP);
  });

  it('cuts a body that stops with 408, and serves one sent slowly that keeps coming', async () => {
    const stopped = open(gateway.url, '127.0.0.2', STUCK);
    const content = 'slow '.repeat(800).trim();
    const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] });
    const upload = open(
      gateway.url,
      '127.0.0.4',
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
    );
    sockets.push(stopped.socket, upload.socket);
    // 64 bytes every 100 ms: over seven times the bound, for more than two windows (about 6.4 s for 4 KB).
    let sent = 0;
    const sending = setInterval(() => {
      upload.socket.write(body.slice(sent, sent + 64));
      sent += 64;
      if (sent >= body.length) clearInterval(sending);
    }, 100);
    try {
      const cut = await stopped.closed;
      expect(cut).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(cut.slice(cut.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: {
          type: 'request_timeout',
          message: `the request body stalled: fewer than ${PROGRESS_BYTES} bytes arrived in ${PROGRESS_MS} ms`,
        },
        status_code: 408,
      });
      const served = await upload.closed;
      expect(served).toMatch(/^HTTP\/1\.1 200 /);
      expect(contents()).toEqual([content]);
    } finally {
      clearInterval(sending);
    }
  });
});
