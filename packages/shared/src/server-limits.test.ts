// Hostile and slow clients against an HTTP port (HTTP/1.1 and h2c on one port, short limits): silent
// sockets, a partial or bare HTTP/2 preface, a slowly sent body, a body that stalls or trickles, idle
// keep-alive connections and sessions are closed; malformed requests get gw's JSON error body; connections
// past the cap make room by closing idle ones, then the body stalled longest, and are refused only while every
// connection holds a request being worked on.
import type { ServerResponse } from 'node:http';
import { type ClientHttp2Stream, connect as connectHttp2 } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { addressShare } from './http/connection-slots.ts';
import { type HttpLimits, type ServerDropReason, startHttpServer } from './server.ts';

type Started = Awaited<ReturnType<typeof startHttpServer>>;
const servers: Started[] = [];
const sockets: Socket[] = [];
/** Answers of `/hold` requests: their body arrived, and the handler works on them until a case ends them. */
const held: ServerResponse[] = [];

afterEach(async () => {
  for (const response of held.splice(0)) response.end();
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.close(100);
});

/** A port that answers 200 once a request's body has arrived; `/hold` is answered only when the case ends. */
async function serve(
  limits: Partial<HttpLimits>,
  onDropped?: (reason: ServerDropReason, count: number) => void,
  draining?: () => boolean,
): Promise<number> {
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    http2: true,
    limits,
    ...(onDropped && { onDropped }),
    ...(draining && { draining }),
    handlers: [
      (request, response) => {
        request.resume();
        request.on('end', () => {
          if (request.url === '/hold') {
            held.push(response as ServerResponse);
            return;
          }
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.end('ok');
        });
        return true;
      },
    ],
  });
  servers.push(server);
  return server.port;
}

/**
 * A raw socket (from `localAddress`, any of 127.0.0.0/8); resolves with what it received and how long it stayed
 * open once the server closes it.
 */
function open(port: number, write?: string | Buffer, localAddress = '127.0.0.1') {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  sockets.push(socket);
  const started = Date.now();
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    received += text;
  });
  socket.on('error', () => {});
  if (write !== undefined) socket.write(write);
  const closed = new Promise<{ received: string; openMs: number }>((resolve) =>
    socket.on('close', () => resolve({ received, openMs: Date.now() - started })),
  );
  return { socket, closed };
}

/**
 * How an HTTP/2 stream was answered: its status and body, once the server has ended its side. A client still
 * sending its body then stops, as a real one does: Node's client stream, told by a RST_STREAM (NO_ERROR) to stop
 * sending while one of its writes is pending, never closes by itself.
 */
function http2Answer(stream: ClientHttp2Stream): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let status = 0;
    let body = '';
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      body += text;
    });
    stream.on('error', () => {});
    const answered = () => {
      resolve({ status, body });
      stream.close();
    };
    stream.once('end', answered);
    stream.once('close', answered);
  });
}

const SHORT = { headersTimeoutMs: 300, requestTimeoutMs: 800, keepAliveTimeoutMs: 400, maxConnections: 100 };
/** Limits no case reaches: what closes a connection is the cap. */
const LONG = { headersTimeoutMs: 20_000, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 20_000 };

describe('startHttpServer limits', () => {
  it('closes a connection that sends nothing, or only part of the HTTP/2 preface', async () => {
    const port = await serve(SHORT);
    const silent = open(port);
    const partial = open(port, 'PRI * HTTP/2.0\r\n');
    for (const { closed } of [silent, partial]) {
      const { openMs } = await closed;
      expect(openMs).toBeLessThan(5_000);
    }
  });

  it('closes an HTTP/2 session that sent the preface alone, or no more requests, after the keep-alive timeout', async () => {
    const port = await serve(SHORT);
    const bare = open(port, Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
    expect((await bare.closed).openMs).toBeLessThan(5_000);
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    const stream = session.request({ ':path': '/' });
    stream.resume();
    await new Promise((resolve) => stream.on('end', resolve));
    await new Promise((resolve) => session.on('close', resolve));
  });

  it('cuts a slowly sent body with 408 and gw’s error body', async () => {
    const port = await serve(SHORT);
    const slow = open(port, 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789');
    const { received, openMs } = await slow.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { type: 'request_timeout' },
      status_code: 408,
    });
    expect(openMs).toBeLessThan(5_000);
  });

  it('answers malformed HTTP/1.1 with a JSON error body, then closes', async () => {
    const port = await serve(SHORT);
    const cases = [
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'NOT A REQUEST LINE\r\n\r\n',
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ];
    for (const raw of cases) {
      const { received } = await open(port, raw).closed;
      expect(received, raw.slice(0, 40)).toMatch(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({
        error: { type: 'invalid_request' },
        status_code: 400,
        is_gateway_error: true,
      });
    }
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const port = await serve(SHORT);
    const client = open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const { received, openMs } = await client.closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(openMs).toBeLessThan(5_000);
  });

  it('closes the oldest idle connection to admit a new one at the cap, so /health gets in past idle sockets', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, maxConnections: 8, maxConnectionsPerAddress: 0 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    // An answered keep-alive connection, then more silent ones than the cap: each new one takes the place of
    // the oldest idle one.
    const keptAlive = open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => keptAlive.socket.once('data', resolve));
    const idle = Array.from({ length: 12 }, () => open(port));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = open(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await new Promise((resolve) => health.socket.once('data', resolve))).toMatch(/^HTTP\/1\.1 200 /);
    await keptAlive.closed;
    for (const { closed } of idle.slice(0, 5)) await closed;
    for (const { socket } of idle.slice(-7)) expect(socket.destroyed).toBe(false);
    expect(dropped).toEqual([]);
  });

  it('refuses a connection past the cap only when every connection holds a request being worked on, counting it', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, maxConnections: 4, maxConnectionsPerAddress: 0 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    // Requests whose bodies arrived and that the handler has not answered yet: busy.
    const working = Array.from({ length: 4 }, () =>
      open(port, 'POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789'),
    );
    await waitFor(() => held.length === 4, { what: 'four requests being worked on' });
    const refused = open(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const { openMs, received } = await refused.closed;
    expect(openMs).toBeLessThan(2_000);
    expect(received).toBe('');
    expect(dropped).toEqual([['connection_cap', 1]]);
    // The busy clients are answered when the handler is done.
    const answered = new Promise<string>((resolve) => working[0]!.socket.once('data', resolve));
    held[0]!.end('done');
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
    for (const { socket } of working) expect(socket.destroyed).toBe(false);
  });

  it('closes the connection whose body has gone longest without a byte to admit a new one at the cap', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, maxConnections: 4, maxConnectionsPerAddress: 0 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    // The oldest connection is an upload that keeps coming; the next is stuck inside a chunk declared 2^64 - 1
    // bytes long; two more are being worked on.
    const upload = open(port, 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789');
    const uploading = setInterval(() => upload.socket.write('0123456789'), 20);
    const stuck = open(
      port,
      'POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc',
    );
    const working = Array.from({ length: 2 }, () =>
      open(port, 'POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789'),
    );
    try {
      await waitFor(() => held.length === 2, { what: 'two requests being worked on' });
      const health = open(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await new Promise((resolve) => health.socket.once('data', resolve))).toMatch(/^HTTP\/1\.1 200 /);
      // The stuck body made room, unanswered; the upload that keeps coming and the busy ones stay.
      expect((await stuck.closed).received).toBe('');
      for (const { socket } of [upload, ...working]) expect(socket.destroyed).toBe(false);
      expect(dropped).toEqual([['body_stalled', 1]]);
    } finally {
      clearInterval(uploading);
    }
  });

  it('cuts a body that brings fewer bytes than the bound in a window with 408, not one that keeps coming', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, bodyProgressMs: 1_000, bodyProgressBytes: 20 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    const head = 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\n';
    // Stopped after 10 bytes; trickling 1 byte every 100 ms (about 10 a window); 10 bytes every 50 ms (about 200).
    const stopped = open(port, `${head}0123456789`);
    const trickle = open(port, head);
    const steady = open(port, head);
    const trickling = setInterval(() => trickle.socket.write('x'), 100);
    let sent = 0;
    const sending = setInterval(() => {
      if (sent < 300) steady.socket.write('0123456789');
      sent += 10;
    }, 50);
    try {
      for (const cut of [stopped, trickle]) {
        const { received, openMs } = await cut.closed;
        expect(received).toMatch(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
          error: {
            type: 'request_timeout',
            message: 'the request body stalled: fewer than 20 bytes arrived in 1000 ms',
          },
          status_code: 408,
        });
        // Cut within a few windows, long before the request timeout (20 s).
        expect(openMs).toBeLessThan(10_000);
      }
      // About 1.5 s to send: several windows, each with enough bytes.
      const answer = await new Promise<string>((resolve) => steady.socket.once('data', resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(dropped).toEqual([
        ['body_stalled', 1],
        ['body_stalled', 1],
      ]);
    } finally {
      clearInterval(trickling);
      clearInterval(sending);
    }
  });

  it('closes each HTTP/1.1 connection after its answer while the process drains', async () => {
    let draining = false;
    const port = await serve(LONG, undefined, () => draining);
    const before = open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await new Promise((resolve) => before.socket.once('data', resolve))).not.toMatch(
      /connection: close/i,
    );
    draining = true;
    const during = open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const { received } = await during.closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase()).toContain('\r\nconnection: close');
    expect(before.socket.destroyed).toBe(false);
  });

  it('holds one remote address to its share: its own idle connections go first, then it is refused', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, maxConnections: 100, maxConnectionsPerAddress: 3 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    const from = (address: string, write?: string) => open(port, write, address);
    const upload = 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789';
    const busy = [from('127.0.0.2', upload), from('127.0.0.2', upload)];
    const idle = from('127.0.0.2');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // At its share: its idle connection makes room.
    const next = from('127.0.0.2', upload);
    await idle.closed;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Now all three are busy: refused, while another address is served.
    const refused = from('127.0.0.2', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await refused.closed).received).toBe('');
    const other = from('127.0.0.3', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await new Promise((resolve) => other.socket.once('data', resolve))).toMatch(/^HTTP\/1\.1 200 /);
    for (const { socket } of [...busy, next]) expect(socket.destroyed).toBe(false);
    expect(dropped).toEqual([['address_share', 1]]);
  });

  it('gives one address nine tenths of the cap unless told otherwise', () => {
    expect(addressShare(1_000, undefined)).toBe(900);
    expect(addressShare(1, undefined)).toBe(1);
    expect(addressShare(1_000, 0)).toBe(0);
    expect(addressShare(1_000, 5_000)).toBe(1_000);
  });

  it('counts the connections a drain cut at its deadline', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      http2: true,
      limits: SHORT,
      onDropped: (reason, count) => dropped.push([reason, count]),
      // An answer that never ends: the drain waits for it until the deadline, then cuts it.
      handlers: [
        (_request, response) => {
          response.writeHead(200);
          response.write('never done');
          return true;
        },
      ],
    });
    const hanging = open(server.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => hanging.socket.once('data', resolve));
    await server.close(200);
    expect(dropped).toEqual([['drain_deadline', 1]]);
    expect((await hanging.closed).openMs).toBeLessThan(5_000);
  });
  it('holds HTTP/2 bodies to the progress bound: stalled streams answered 408 and reset, a steady one served', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, bodyProgressMs: 1_000, bodyProgressBytes: 20 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    // One session with two streams stopped after 10 bytes of 300; a session of its own that keeps sending.
    const stuck = connectHttp2(`http://127.0.0.1:${port}`);
    const steady = connectHttp2(`http://127.0.0.1:${port}`);
    const post = { ':method': 'POST', ':path': '/x', 'content-length': '300' };
    const stopped = [stuck.request(post), stuck.request(post)];
    for (const stream of stopped) stream.write('0123456789');
    const sending = steady.request(post);
    let sent = 0;
    const writing = setInterval(() => {
      if (sent < 300) sending.write('0123456789');
      sent += 10;
      if (sent === 300) sending.end();
    }, 50);
    try {
      const [first, second, served] = await Promise.all([...stopped, sending].map(http2Answer));
      for (const cut of [first, second]) {
        expect(cut?.status).toBe(408);
        expect(JSON.parse(cut?.body ?? '')).toMatchObject({
          error: {
            type: 'request_timeout',
            message: 'the request body stalled: fewer than 20 bytes arrived in 1000 ms',
          },
        });
      }
      expect(served).toMatchObject({ status: 200, body: 'ok' });
      // Both streams of the stuck session were cut together: one cut of the connection's bodies.
      expect(dropped).toEqual([['body_stalled', 1]]);
    } finally {
      clearInterval(writing);
      stuck.destroy();
      steady.destroy();
    }
  });

  it('cuts an HTTP/2 body still arriving at the request timeout, however steadily it comes', async () => {
    const port = await serve({
      ...LONG,
      requestTimeoutMs: 800,
      bodyProgressMs: 10_000,
      bodyProgressBytes: 1,
    });
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    const stream = session.request({ ':method': 'POST', ':path': '/x', 'content-length': '100000' });
    const trickling = setInterval(() => {
      if (stream.writable) stream.write('x');
    }, 20);
    try {
      expect(await http2Answer(stream)).toMatchObject({ status: 408 });
    } finally {
      clearInterval(trickling);
      session.destroy();
    }
  });

  it('closes an HTTP/2 session whose bodies stalled to admit a new connection at the cap', async () => {
    const dropped: Array<[ServerDropReason, number]> = [];
    const port = await serve({ ...LONG, maxConnections: 3, maxConnectionsPerAddress: 0 }, (reason, count) =>
      dropped.push([reason, count]),
    );
    // HTTP/2 sessions are never idle in the slots' eyes: without the body watch, three stuck sessions hold the cap.
    const stuck = Array.from({ length: 3 }, () => connectHttp2(`http://127.0.0.1:${port}`));
    try {
      const closed = stuck.map((session) => new Promise((resolve) => session.on('close', resolve)));
      for (const session of stuck) {
        session.on('error', () => {});
        const stream = session.request({ ':method': 'POST', ':path': '/x', 'content-length': '300' });
        stream.on('error', () => {});
        stream.write('0123456789');
      }
      // Connected, then a ping answered: the server has read the preface and the request before it (frames
      // come in order; a ping sent before the session connects is answered at once, with an error).
      await Promise.all(stuck.map((session) => new Promise((resolve) => session.once('connect', resolve))));
      await Promise.all(
        stuck.map(
          (session) =>
            new Promise((resolve, reject) =>
              session.ping((error) => (error ? reject(error) : resolve(null))),
            ),
        ),
      );
      const health = open(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await new Promise((resolve) => health.socket.once('data', resolve))).toMatch(/^HTTP\/1\.1 200 /);
      await Promise.race(closed);
      expect(dropped).toEqual([['body_stalled', 1]]);
    } finally {
      for (const session of stuck) session.destroy();
    }
  });
});
