import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '@gw/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamClient } from './upstream-client.ts';

/** What each path of the fake upstream does; `seen` lists the requests it took, with their bodies. */
const routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
  '/whole': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
    // Three writes: the client joins the chunks.
    response.write('{"parts":[');
    setTimeout(() => response.write('"a","b"'), 5);
    setTimeout(() => response.end(']}'), 10);
  },
  '/large': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('x'.repeat(64 * 1024));
  },
  '/large-error': (_request, response) => {
    response.writeHead(503, { 'retry-after': '7' });
    response.end(`{"error":"${'e'.repeat(64 * 1024)}"}`);
  },
  '/stall-body': (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"partial":');
  },
  '/stall-headers': () => {},
};
const seen: Array<{ path: string; body: string }> = [];
let server: Server;
let origin = '';
const client = new UpstreamClient();

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ path: request.url ?? '', body });
      routes[request.url ?? '']?.(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const limits = { limit: 1024, errorLimit: 100, tooLarge: () => new Error('too large') };
const call = (path: string, signal: AbortSignal, timeoutMs = 5_000) => ({
  url: new URL(path, origin),
  headers: { 'content-type': 'application/json' },
  body: '{"question":1}',
  signal,
  timeoutMs,
});
const open = () => new AbortController().signal;

describe('UpstreamClient.requestWhole', () => {
  it('answers the status, the headers and the whole body of an answer sent in chunks', async () => {
    const answer = await client.requestWhole(call('/whole', open()), limits);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ parts: ['a', 'b'] });
    expect(seen.at(-1)).toEqual({ path: '/whole', body: '{"question":1}' });
  });

  it('fails with the caller’s error when the answer is larger than the limit', async () => {
    await expect(client.requestWhole(call('/large', open()), limits)).rejects.toThrow('too large');
    // The connection was dropped, not left half-read: the next call on the pool is served.
    expect((await client.requestWhole(call('/whole', open()), limits)).statusCode).toBe(200);
  });

  it('keeps the first errorLimit bytes of an error answer, and its headers', async () => {
    const answer = await client.requestWhole(call('/large-error', open()), limits);
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.body.toString('utf8')).toBe(`{"error":"${'e'.repeat(90)}`);
  });

  it('stops at once, as a cancellation, when the caller goes away mid-answer', async () => {
    const controller = new AbortController();
    const pending = client.requestWhole(call('/stall-body', controller.signal), limits);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ type: 'cancelled' });
  });

  it('sends nothing for a caller that has already gone', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = seen.length;
    await expect(client.requestWhole(call('/whole', controller.signal), limits)).rejects.toBeInstanceOf(
      GatewayError,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.length).toBe(before);
  });

  it('answers upstream_timeout when the upstream sends no headers in time', async () => {
    await expect(client.requestWhole(call('/stall-headers', open(), 200), limits)).rejects.toMatchObject({
      type: 'upstream_timeout',
    });
  });
});
