import type { Server } from 'node:http';
import type { Http2Server, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';

// Cleartext HTTP/2 beside HTTP/1.1 on one port: which server a connection goes to, and HTTP/2 sessions that
// hold a connection without asking anything closed.

/** The first bytes of every HTTP/2 connection (RFC 9113 §3.4); an HTTP/1 request never starts with them. */
const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * Hands a new connection to the HTTP/1.1 or the HTTP/2 server by its first bytes (h2c with prior
 * knowledge, as the AWS SDK's default handler speaks it). Only the first packet of a connection is
 * looked at; keep-alive requests after it cost nothing more. A connection that sends nothing, or only part
 * of the HTTP/2 preface, within the headers timeout is closed.
 */
export function dispatchConnection(options: {
  socket: Socket;
  http1: Server;
  http2: Http2Server;
  timeoutMs: number;
  /**
   * An HTTP/2 connection and its session: multiplexed, it is never taken for an idle one (its session closes
   * when idle).
   */
  onHttp2: (socket: Socket, session: ServerHttp2Session) => void;
}): void {
  const { socket, http1, http2, timeoutMs } = options;
  let received: Buffer | undefined;
  const silent = setTimeout(() => socket.destroy(), timeoutMs);
  silent.unref();
  const onData = (chunk: Buffer) => {
    received = received ? Buffer.concat([received, chunk]) : chunk;
    const compared = Math.min(received.length, HTTP2_PREFACE.length);
    const preface = received.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared));
    if (preface && received.length < HTTP2_PREFACE.length) return;
    clearTimeout(silent);
    socket.off('data', onData);
    socket.pause();
    socket.unshift(received);
    if (preface) {
      // The server makes the connection's session as it is told of it ('session' comes before emit returns).
      let session: ServerHttp2Session | undefined;
      const made = (made: ServerHttp2Session) => {
        session = made;
      };
      http2.once('session', made);
      // The HTTP/2 session reads what the socket already buffered itself (nodejs/node#35475).
      http2.emit('connection', socket);
      http2.off('session', made);
      if (session) options.onHttp2(socket, session);
      else socket.destroy();
    } else {
      http1.emit('connection', socket);
      process.nextTick(() => socket.resume());
    }
  };
  socket.on('data', onData);
  socket.once('close', () => clearTimeout(silent));
}

/**
 * Closes an HTTP/2 session that has had no stream for the keep-alive timeout (a client that sent the preface
 * alone, or stopped asking); sessions with streams in flight are left alone, however long those take.
 */
export function closeIdleSessions(http2: Http2Server, keepAliveTimeoutMs: number): void {
  const open = new WeakMap<ServerHttp2Session, number>();
  http2.on('session', (session: ServerHttp2Session) => {
    open.set(session, 0);
    session.setTimeout(keepAliveTimeoutMs, () => {
      if ((open.get(session) ?? 0) === 0) session.close();
    });
  });
  http2.on('stream', (stream) => {
    const session = stream.session as ServerHttp2Session | undefined;
    if (!session) return;
    open.set(session, (open.get(session) ?? 0) + 1);
    stream.once('close', () => open.set(session, (open.get(session) ?? 1) - 1));
  });
}
