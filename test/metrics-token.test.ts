// `/metrics` can require a credential (GW_METRICS_TOKEN): the embedded gateway's port and a service's metrics
// port answer 401 with gw's error body without the bearer, the metrics with it, and everything as before
// when no token is set.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetrics, parseGatewayConfig, silentLogger } from '@gw/shared';
import { metricsHandler, startHttpServer } from '@gw/shared/server';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedGateway } from '../src/embedded-gateway.ts';

const TOKEN = 'metrics-token-0123456789';
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
});

async function scrape(url: string, token?: string) {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, text: await response.text() };
}

it('guards a service metrics port with the token', async () => {
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    handlers: [metricsHandler(createMetrics({ service: 'token-test' }), TOKEN)],
  });
  closers.push(() => server.close(100));
  const url = `http://127.0.0.1:${server.port}/metrics`;
  const refused = await scrape(url);
  expect(refused.status).toBe(401);
  expect(JSON.parse(refused.text).error).toMatchObject({ type: 'unauthorized' });
  expect((await scrape(url, 'wrong-token')).status).toBe(401);
  const allowed = await scrape(url, TOKEN);
  expect(allowed.status).toBe(200);
  expect(allowed.text).toContain('gw_');
});

it('guards the embedded gateway’s /metrics with the token, and leaves it open without one', async () => {
  for (const metricsToken of [TOKEN, undefined]) {
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-metrics-token-'));
    const gateway = await startEmbeddedGateway({
      config: parseGatewayConfig({}),
      logger: silentLogger(),
      port: 0,
      host: '127.0.0.1',
      dataDir,
      environment: {},
      metricsToken,
    });
    closers.push(async () => {
      await gateway.close(100);
      await rm(dataDir, { recursive: true, force: true });
    });
    const url = `http://127.0.0.1:${gateway.port}/metrics`;
    if (metricsToken) {
      expect((await scrape(url)).status).toBe(401);
      expect((await scrape(url, metricsToken)).status).toBe(200);
    } else {
      expect((await scrape(url)).status).toBe(200);
    }
  }
});
