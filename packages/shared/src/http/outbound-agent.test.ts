import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundPolicy } from './outbound-address.ts';
import { guardedConnector, outboundAgent } from './outbound-agent.ts';

// Only loopback: a server on 127.0.0.1 stands for a private upstream the policy must not reach.
let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((_request, response) => {
    hits += 1;
    response.end('secret');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function statusOrCode(url: string, dispatcher: Agent): Promise<number | string> {
  try {
    const answer = await request(url, { dispatcher });
    await answer.body.text();
    return answer.statusCode;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('outboundAgent', () => {
  it('connects where the policy allows (loopback by default)', async () => {
    const agent = outboundAgent(outboundPolicy());
    expect(await statusOrCode(`http://127.0.0.1:${port}/`, agent)).toBe(200);
    await agent.close();
  });

  it('refuses a literal the policy refuses, before any socket', async () => {
    const agent = outboundAgent(outboundPolicy({ allow_loopback: false }));
    const before = hits;
    expect(await statusOrCode(`http://127.0.0.1:${port}/`, agent)).toBe('outbound_address_refused');
    expect(await statusOrCode(`http://[::ffff:127.0.0.1]:${port}/`, agent)).toBe('outbound_address_refused');
    expect(await statusOrCode(`http://2130706433:${port}/`, agent)).toBe('outbound_address_refused');
    expect(hits).toBe(before);
    await agent.close();
  });

  it('refuses at connect time a name that now resolves to a refused address (DNS rebinding)', async () => {
    const policy = outboundPolicy({ allow_loopback: false });
    const agent = new Agent({
      connect: guardedConnector(policy, {
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      }),
    });
    const before = hits;
    expect(await statusOrCode(`http://public.example.com:${port}/`, agent)).toBe('outbound_address_refused');
    expect(hits).toBe(before);
    await agent.close();
  });
});
