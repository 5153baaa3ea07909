import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkConfigSchema } from '@gw/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../upstream-client.ts';
import type { AdapterContext } from './adapter.ts';
import { callSse } from './upstream-call.ts';

/**
 * A stream whose end comes a little after its `[DONE]` (as a real upstream's final chunk may), or never
 * (`/open`); each request is told which connection (client port) it came on.
 */
let server: Server;
let baseUrl = '';
const ports: number[] = [];
/** The client ports whose connection has closed. */
const closed = new Set<number>();
const client = new UpstreamClient();

beforeAll(async () => {
  server = createServer((request, response) => {
    const port = request.socket.remotePort ?? 0;
    ports.push(port);
    request.socket.once('close', () => closed.add(port));
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: {"n":1}\n\ndata: [DONE]\n\n');
    if (request.url === '/late-end') setTimeout(() => response.end(), 50);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const context = (signal = new AbortController().signal): AdapterContext => ({
  provider: 'openai',
  http: client,
  baseUrl,
  key: undefined,
  network: networkConfigSchema.parse({}),
  timeoutMs: 5_000,
  signal,
  environment: {},
});

/** Reads events up to `[DONE]`, then stops reading, as the stream mappers do. */
async function untilDone(path: string, signal?: AbortSignal): Promise<string[]> {
  const data: string[] = [];
  for await (const event of callSse(context(signal), { path, headers: {} }, () => undefined)) {
    if (event.data === '[DONE]') break;
    data.push(event.data);
  }
  return data;
}

describe('callSse', () => {
  it('keeps the connection of a stream read up to [DONE] whose end follows', async () => {
    ports.length = 0;
    expect(await untilDone('/late-end')).toEqual(['{"n":1}']);
    // The end comes 50 ms after [DONE]; the next call goes out after it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await untilDone('/late-end')).toEqual(['{"n":1}']);
    // The rest of the first answer was read and dropped: the second call came on the same connection.
    expect(ports).toHaveLength(2);
    expect(ports[1]).toBe(ports[0]);
  });

  it('drops, within a second, the connection of a stream whose end does not come after [DONE]', async () => {
    ports.length = 0;
    await untilDone('/open');
    await untilDone('/late-end');
    expect(ports).toHaveLength(2);
    expect(ports[1]).not.toBe(ports[0]);
    await expect.poll(() => closed.has(ports[0]!), { timeout: 3_000 }).toBe(true);
    expect(closed.has(ports[1]!)).toBe(false);
  });

  it('drops the connection at once when the caller went away', async () => {
    ports.length = 0;
    const caller = new AbortController();
    const events = callSse(context(caller.signal), { path: '/open', headers: {} }, () => undefined);
    await events.next();
    caller.abort();
    await events.return(undefined);
    await expect.poll(() => closed.has(ports[0]!), { timeout: 500 }).toBe(true);
  });
});
