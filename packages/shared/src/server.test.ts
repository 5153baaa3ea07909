import { Agent, request as httpRequest } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer } from './server.ts';

type Started = Awaited<ReturnType<typeof startHttpServer>>;

function echo(delayMs = 0) {
  return (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => {
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(`${request.httpVersion} ${request.method} ${request.url}`);
    }, delayMs);
    return true;
  };
}

function http1Get(port: number, path: string, agent?: Agent) {
  return new Promise<{ body: string; socket: unknown }>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, agent }, (response) => {
      const socket = response.socket;
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ body, socket }));
    });
    request.on('error', reject);
    request.end();
  });
}

function http2Get(port: number, path: string) {
  const session = connectHttp2(`http://127.0.0.1:${port}`);
  return new Promise<string>((resolve, reject) => {
    const stream = session.request({ ':path': path });
    let body = '';
    stream.on('data', (chunk) => {
      body += chunk;
    });
    stream.on('end', () => {
      session.close();
      resolve(body);
    });
    stream.on('error', reject);
  });
}

describe('startHttpServer with http2', () => {
  let server: Started | undefined;
  afterEach(async () => {
    await server?.close(1_000);
    server = undefined;
  });

  it('serves HTTP/1.1 (keep-alive kept) and cleartext HTTP/2 on one port', async () => {
    server = await startHttpServer({ port: 0, host: '127.0.0.1', handlers: [echo()], http2: true });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await http1Get(server.port, '/one', agent);
    const second = await http1Get(server.port, '/two', agent);
    expect(first.body).toBe('1.1 GET /one');
    expect(second.body).toBe('1.1 GET /two');
    expect(second.socket).toBe(first.socket);
    agent.destroy();
    expect(await http2Get(server.port, '/three?x=1')).toBe('2.0 GET /three?x=1');
  });

  it('waits for the whole preface when it arrives in pieces', async () => {
    server = await startHttpServer({ port: 0, host: '127.0.0.1', handlers: [echo()], http2: true });
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('PRI * HT');
    await new Promise((resolve) => setTimeout(resolve, 30));
    socket.write('TP/2.0\r\n\r\nSM\r\n\r\n');
    // A SETTINGS frame from the server (type 4) proves the connection went to the HTTP/2 server.
    const frame = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    expect(frame[3]).toBe(4);
    socket.destroy();
    const split = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => split.once('connect', resolve));
    split.write('G');
    await new Promise((resolve) => setTimeout(resolve, 30));
    split.write('ET /split HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    for await (const chunk of split) text += chunk;
    expect(text).toContain('1.1 GET /split');
  });

  it('drains in-flight HTTP/1.1 and HTTP/2 requests on close, then ends', async () => {
    server = await startHttpServer({ port: 0, host: '127.0.0.1', handlers: [echo(200)], http2: true });
    const started = server;
    const agent = new Agent({ keepAlive: true });
    const pending = [http1Get(started.port, '/h1', agent), http2Get(started.port, '/h2')];
    await new Promise((resolve) => setTimeout(resolve, 50));
    const begun = performance.now();
    const closing = started.close(5_000);
    const [h1, h2] = await Promise.all(pending);
    expect(h1!).toMatchObject({ body: '1.1 GET /h1' });
    expect(h2).toBe('2.0 GET /h2');
    await closing;
    expect(performance.now() - begun).toBeLessThan(1_500);
    server = undefined;
    agent.destroy();
  });
});
