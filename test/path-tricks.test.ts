// No path trick reaches a provider with gw's key: every HTTP port refuses request targets with dot segments
// (also percent-encoded), encoded slashes or backslashes, empty segments, control characters and non-origin
// forms with a 400 before any route runs, over HTTP/1.1 and h2c, in both modes; the router refuses a
// pass-through path outside its operation's documented root even when its caller sends one (defence in
// depth). Requests are written raw: fetch and most clients normalise dot segments themselves.
import { connect as http2Connect } from 'node:http2';
import { connect } from 'node:net';
import {
  type FakeOpenAi,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** One raw HTTP/1.1 exchange: the target written exactly as given; the status and body of the answer. */
function rawRequest(url: string, method: string, target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      resolve({ status, body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(
      `${method} ${target} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer sk-caller\r\nConnection: close\r\n\r\n`,
    );
  });
}

/** One h2c (prior knowledge) exchange with `:path` as given. */
function h2cRequest(url: string, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(url);
    session.on('error', reject);
    const stream = session.request({ ':method': method, ':path': path });
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.on('data', (text: string) => {
      body += text;
    });
    stream.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    stream.on('error', reject);
    stream.end();
  });
}

/** Targets that must never leave gw, for each pass-through root and surface. */
const TRICKS = [
  '/v1/models/../../api/providers',
  '/v1/models/%2e%2e/%2e%2e/api/providers',
  '/v1/models/%2E%2e/x',
  '/v1/models/.%2e/x',
  '/v1/files/x%2f..%2fy',
  '/v1/files/x%5c..%5cy',
  '/v1//models',
  '/v1/models/%00',
  '/openai/v1/models/../../../admin',
  '/openai/v1/files/%2e%2e/%2e%2e/v2/secrets',
  '/anthropic/v1/models/../../v1/organizations',
  '/anthropic/v1/models/%2e%2e/%2e%2e/v1/organizations',
  '/genai/v1beta/models/..%2f..%2fv1%2fprojects',
  '/genai/v1beta/models/%2e%2e/tunedModels',
  '/v1/chat/completions/../../../v1/models',
  '/api/providers/../governance/virtual-keys',
  '/api/governance/virtual-keys/%2e%2e',
];

const modes = [
  ['embedded', (config: object) => startEmbedded({ config, adminToken: 'tricks-admin' })],
  ['cluster', (config: object) => startCluster({ config, adminToken: 'tricks-admin' })],
] as const;

describe.each(modes)('path tricks (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: {
        openai: { keys: [{ value: 'sk-gateway-openai-key' }], network_config: { base_url: fake.url } },
        anthropic: { keys: [{ value: 'sk-gateway-anthropic-key' }], network_config: { base_url: fake.url } },
        gemini: { keys: [{ value: 'gateway-gemini-key' }], network_config: { base_url: fake.url } },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it.each(TRICKS)('refuses %s over HTTP/1.1 and h2c, and nothing reaches the upstream', async (target) => {
    const before = fake.requests.length;
    for (const url of [gateway.url, gateway.adminUrl]) {
      for (const method of ['GET', 'POST', 'HEAD', 'OPTIONS']) {
        const answer = await rawRequest(url, method, target);
        expect(answer.status, `${method} ${target}`).toBe(400);
        if (method !== 'HEAD') {
          expect(JSON.parse(answer.body)).toMatchObject({
            error: { type: 'invalid_request' },
            status_code: 400,
          });
        }
      }
    }
    const h2 = await h2cRequest(gateway.url, 'GET', target);
    expect(h2.status).toBe(400);
    expect(JSON.parse(h2.body).error.type).toBe('invalid_request');
    expect(fake.requests.length).toBe(before);
  });

  it('refuses absolute-form targets instead of forwarding them', async () => {
    const before = fake.requests.length;
    const answer = await rawRequest(gateway.url, 'GET', `${fake.url}/v1/models`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.message).toContain('origin form');
    expect(fake.requests.length).toBe(before);
  });

  it('still forwards the documented paths, as they were asked', async () => {
    const before = fake.requests.length;
    const models = await rawRequest(gateway.url, 'GET', '/v1/models');
    expect(models.status).toBe(200);
    expect(fake.requests.slice(before).map((request) => request.path)).toEqual(['/v1/models']);
    expect(fake.last().headers.authorization).toBe('Bearer sk-gateway-openai-key');
    // A trailing slash is no endpoint of its own: not a different upstream path either.
    const slash = await rawRequest(gateway.url, 'GET', '/v1/chat/completions/');
    expect(slash.status).toBe(404);
  });
});
