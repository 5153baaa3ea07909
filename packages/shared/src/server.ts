import { readFileSync } from 'node:fs';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import {
  constants,
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { Duplex } from 'node:stream';
import { GatewayError, invalidRequest, noEndpoint } from './errors/gateway-error.ts';
import { errorBody, sendError } from './errors/http.ts';
import { closeIdleSessions, dispatchConnection } from './h2c-connections.ts';
import { carriesToken, metricsTokenRequired } from './http/bearer.ts';
import { sendJson } from './http/body.ts';
import { addressShare, ConnectionSlots } from './http/connection-slots.ts';
import { requestTargetProblem } from './http/request-target.ts';
import { newRequestId } from './ids.ts';
import { type Probes, probeStatus } from './probes.ts';

// What every main does around its servers: start, refuse to start, shut down (one entry point, @gw/shared/server).
export { onShutdown, refuseStart, startService } from './service-lifecycle.ts';

export interface Closable {
  /** Stops accepting work, waits for what is in flight up to the deadline, then forces. */
  close(deadlineMs: number): Promise<void>;
}

/** How long disposing a server drains what is in flight when its composition root names no deadline. */
const DEFAULT_DRAIN_MS = 25_000;

/**
 * A server as a resource of a composition root's stack: disposing it closes it, draining for `drainMs`
 * (GW_SHUTDOWN_TIMEOUT_MS) before cutting what is still open.
 */
export function disposableServer<T extends Closable>(
  server: T,
  drainMs = DEFAULT_DRAIN_MS,
): T & AsyncDisposable {
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.close(drainMs) });
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The answer for a path no handler claimed. */
function notFoundHandler(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '/').split('?')[0];
  sendError(response, noEndpoint(request.method, path ?? '/'), newRequestId());
}

/**
 * How long clients may take, and how many may hold a connection: every socket is bounded so that idle or
 * slow clients can neither hold memory nor exhaust the file descriptors (`GW_*_TIMEOUT_MS`,
 * `GW_MAX_CONNECTIONS`).
 */
export interface HttpLimits {
  /** From a connection's first byte (or its opening) to the end of a request's headers. */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body (a slowly sent upload is cut with 408). */
  requestTimeoutMs: number;
  /**
   * A body still arriving must bring at least `bodyProgressBytes` every `bodyProgressMs`, or it is cut with 408
   * (HTTP/1.1): a body that stops, or trickles, is cut long before the request timeout.
   */
  bodyProgressMs: number;
  bodyProgressBytes: number;
  /** How long an HTTP/1.1 keep-alive connection or an HTTP/2 session without requests stays open. */
  keepAliveTimeoutMs: number;
  /**
   * Connections held at once: past it the oldest idle connection is closed to admit a new one (else the one
   * whose body has gone longest without a byte), and a new one is refused only when every connection holds a
   * request being worked on.
   */
  maxConnections: number;
  /**
   * Connections one remote address may hold (GW_MAX_CONNECTIONS_PER_ADDRESS; 0: no share); undefined: nine
   * tenths of the cap (connection-slots.ts `addressShare`).
   */
  maxConnectionsPerAddress?: number | undefined;
}

/** The soft limit of open files of this process (Linux), or undefined where it cannot be read. */
function openFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The connections one process may hold: `wanted`, but always below the soft limit of open files, leaving
 * room for upstream sockets, Redis, gRPC and files (a quarter of the limit, at least 64). Node cannot raise the
 * limit itself: `ulimit -n` (or the container runtime's `nofile`) does.
 */
function connectionCap(wanted: number): number {
  const files = openFilesLimit();
  if (files === undefined) return wanted;
  return Math.max(1, Math.min(wanted, files - Math.max(64, Math.floor(files / 4))));
}

const DEFAULT_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  bodyProgressMs: 10_000,
  bodyProgressBytes: 1_024,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
};

/** How long a connection answered with an error stays open for the client to read it and close first. */
const LINGER_MS = 2_000;

/**
 * Writes an error answer on a socket outside any response object (the request was refused before, or instead
 * of, its handler's answer), then closes it: at once when the client closes its side, else after LINGER_MS (a
 * client that never closes must not hold the connection).
 */
function refuseOnSocket(socket: Duplex, refusal: GatewayError): void {
  const payload = JSON.stringify(errorBody(refusal, newRequestId()));
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`,
  );
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * Node's HTTP parser refuses a malformed request (a bad request line or header, bad chunked framing, headers
 * too large, a request too slow) before gw sees it; the answer still carries gw's error body, then closes.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT';
  refuseOnSocket(
    socket,
    timedOut
      ? new GatewayError({ type: 'request_timeout', message: 'the request was not received in time' })
      : invalidRequest(
          error.code === 'HPE_HEADER_OVERFLOW'
            ? 'the request headers are too large'
            : `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`,
        ),
  );
}

/** Why the HTTP server refused or cut a connection (`gw_dropped_requests_total`'s reason). */
export type ServerDropReason = 'connection_cap' | 'address_share' | 'body_stalled' | 'drain_deadline';

/** Takes an upgrade request's socket (answering true) or leaves it to the next handler. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

/**
 * Serves handlers over HTTP/1.1 and, with `http2: true`, also over cleartext HTTP/2 on the same port (the
 * first bytes of each connection decide); handlers see the same request and response API either way
 * (node:http2's compatibility API). Every connection is bounded by `limits`.
 */
export async function startHttpServer(options: {
  port: number;
  host: string;
  handlers: RequestHandler[];
  /** HTTP/1.1 upgrade requests (WebSocket), in order: each answers true when it took the socket. */
  upgrades?: UpgradeHandler[];
  http2?: boolean;
  limits?: Partial<HttpLimits>;
  /**
   * Told about connections refused for overload: `connection_cap` (past maxConnections with every connection
   * busy, closed unanswered), `address_share` (its address holds its share, all busy), `body_stalled` (a
   * request whose body fell below the progress bound, answered 408, or went longest without a byte when the cap
   * needed room) and `drain_deadline` (still open when the drain deadline cut them).
   */
  onDropped?: (reason: ServerDropReason, count: number) => void;
  /**
   * True while the process drains (after SIGTERM, through GW_DRAIN_DELAY_MS): every HTTP/1.1 answer then
   * closes its connection, so keep-alive clients reconnect, to another replica once the load balancer knows.
   */
  draining?: () => boolean;
  /** How long disposing the server drains (GW_SHUTDOWN_TIMEOUT_MS); `close(deadlineMs)` names its own. */
  drainMs?: number;
}): Promise<Closable & AsyncDisposable & { server: Server; port: number }> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const maxConnections = connectionCap(limits.maxConnections);
  const dropped = (reason: ServerDropReason, count: number) => {
    if (count > 0) options.onDropped?.(reason, count);
  };
  const slots = new ConnectionSlots({
    cap: maxConnections,
    perAddress: addressShare(maxConnections, limits.maxConnectionsPerAddress),
    progress: { windowMs: limits.bodyProgressMs, bytes: limits.bodyProgressBytes },
    onBodyCut: () => dropped('body_stalled', 1),
  });
  // Bodies are looked at a few times a window (at most once a second): one timer for the whole port.
  const bodySweep = setInterval(
    () => slots.sweep(),
    Math.max(50, Math.min(1_000, Math.floor(limits.bodyProgressMs / 4))),
  );
  bodySweep.unref();
  const bodyStalled = new GatewayError({
    type: 'request_timeout',
    message: `the request body stalled: fewer than ${limits.bodyProgressBytes} bytes arrived in ${limits.bodyProgressMs} ms`,
  });
  /** Takes a new connection into the slots; false (and closed, counted) when it is refused. */
  const admit = (socket: Socket): boolean => {
    const refused = slots.admit(socket);
    if (refused === undefined) return true;
    dropped(refused, 1);
    socket.destroy();
    return false;
  };
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const problem = requestTargetProblem(request.method, request.url);
    if (problem) {
      sendError(
        response,
        invalidRequest(`${problem}: ${JSON.stringify((request.url ?? '').slice(0, 200))}`),
        newRequestId(),
      );
      return;
    }
    for (const handler of options.handlers) if (handler(request, response)) return;
    notFoundHandler(request, response);
  };
  const server = createServer(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node requires the headers to be due no later than the whole request.
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      requestTimeout: limits.requestTimeoutMs,
      // How often the two timeouts above are checked (Node's default, 30 s, would let them run 30 s over).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    handle,
  );
  server.on('clientError', answerClientError);
  // An HTTP/1.1 connection is busy while a request is on it (HTTP/2 streams come through here too: their
  // sockets are held for good when they are dispatched).
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.httpVersionMajor !== 1) return;
    const socket = request.socket as Socket;
    const release = slots.hold(socket);
    response.once('close', release);
    if (options.draining?.()) response.setHeader('connection', 'close');
    // Until its body has arrived, the request must keep it coming (cut: 408, and the connection is idle). A
    // request without a body (a GET) is complete once its headers are.
    const { 'transfer-encoding': chunked, 'content-length': length } = request.headers;
    if (chunked === undefined && (length === undefined || length === '0')) return;
    slots.receive(socket, request, () => {
      release();
      if (response.headersSent) socket.destroy();
      else refuseOnSocket(socket, bodyStalled);
    });
  });
  const upgrades = options.upgrades ?? [];
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // An upgraded socket (a live tail) is busy until it closes.
    slots.hold(socket as Socket);
    for (const upgrade of upgrades) if (upgrade(request, socket, head)) return;
    socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  if (!options.http2) {
    // Before Node's own listener sets the connection up: a refused one is closed unread.
    server.prependListener('connection', (socket: Socket) => {
      admit(socket);
    });
    await listen(server, options);
    return disposableServer(
      {
        server,
        port: (server.address() as AddressInfo).port,
        close: (deadlineMs) =>
          new Promise<void>((resolve) => {
            const force = setTimeout(() => {
              dropped('drain_deadline', slots.size);
              server.closeAllConnections();
            }, deadlineMs);
            // A keep-alive connection whose response finishes during the drain turns idle later, and Node does
            // not close it by itself: sweep idle connections until the server has closed (no hot-path cost).
            const sweep = setInterval(() => server.closeIdleConnections(), 50);
            server.close(() => {
              clearTimeout(force);
              clearInterval(sweep);
              clearInterval(bodySweep);
              resolve();
            });
            server.closeIdleConnections();
          }),
      },
      options.drainMs,
    );
  }

  const http2 = createHttp2Server(
    {},
    handle as unknown as (request: Http2ServerRequest, response: Http2ServerResponse) => void,
  );
  closeIdleSessions(http2, limits.keepAliveTimeoutMs);
  const watchBody = http2BodyWatch(slots, limits, bodyStalled);
  http2.prependListener('request', watchBody.request);
  const sessions = new Set<ServerHttp2Session>();
  http2.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  // The HTTP/1.1 server never listens itself; 'listening' starts its connection tracking, which
  // closeIdleConnections and the request timeouts rely on.
  server.emit('listening');
  // Every socket of the port, whichever server it went to: past the drain deadline all of them are closed.
  const sockets = new Set<Socket>();
  const listener = createNetServer({ noDelay: true }, (socket) => {
    if (!admit(socket)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    dispatchConnection({
      socket,
      http1: server,
      http2,
      timeoutMs: limits.headersTimeoutMs,
      onHttp2: (http2Socket, session) => {
        slots.hold(http2Socket);
        watchBody.session(session, http2Socket);
      },
    });
  });
  await listen(listener, options);
  return disposableServer(
    {
      server,
      port: (listener.address() as AddressInfo).port,
      close: (deadlineMs) =>
        new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            dropped('drain_deadline', sockets.size);
            server.closeAllConnections();
            for (const session of sessions) session.destroy();
            for (const socket of sockets) socket.destroy();
          }, deadlineMs);
          // As above: HTTP/1.1 keep-alive connections that turn idle during the drain are swept; HTTP/2
          // sessions get a GOAWAY and end once their streams have.
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          listener.close(() => {
            clearTimeout(force);
            clearInterval(sweep);
            clearInterval(bodySweep);
            resolve();
          });
          // Stops the HTTP/1.1 server's timers and closes its idle keep-alive connections.
          server.close(() => {});
          for (const session of sessions) session.close();
        }),
    },
    options.drainMs,
  );
}

/**
 * HTTP/2 request bodies held to the bounds HTTP/1.1's are: every stream of a session whose body is arriving
 * counts against the progress bound together (they share the connection's bytes: `ConnectionSlots.receive` on
 * the session's socket), so a session of stalled streams is cut (each answered 408, its stream reset) or closed
 * to make room at the cap; and each body must be complete within the request timeout.
 */
function http2BodyWatch(slots: ConnectionSlots, limits: HttpLimits, stalled: GatewayError) {
  const sockets = new WeakMap<ServerHttp2Session, Socket>();
  /** Per connection, its requests whose bodies are arriving, each with its answer. */
  const arriving = new WeakMap<Socket, Map<Http2ServerRequest, Http2ServerResponse>>();
  const cut = (request: Http2ServerRequest, response: Http2ServerResponse) => {
    // The answer sent, the stream is reset so that the client stops sending.
    if (!response.headersSent) sendError(response as unknown as ServerResponse, stalled, newRequestId());
    // Node sends the reset once the answer has been written.
    request.stream.close(constants.NGHTTP2_NO_ERROR);
  };
  const watch = (socket: Socket, bodies: Map<Http2ServerRequest, Http2ServerResponse>) =>
    slots.receive(
      socket,
      {
        get complete() {
          return bodies.size === 0;
        },
        get readableLength() {
          let unread = 0;
          for (const body of bodies.keys()) unread += body.readableLength;
          return unread;
        },
      },
      () => {
        for (const [request, response] of [...bodies]) cut(request, response);
      },
    );
  return {
    session(session: ServerHttp2Session, socket: Socket): void {
      sockets.set(session, socket);
    },
    request(request: Http2ServerRequest, response: Http2ServerResponse): void {
      const { stream } = request;
      if (stream.endAfterHeaders || stream.readableEnded) return;
      const socket = sockets.get(stream.session as ServerHttp2Session);
      if (!socket) return;
      let bodies = arriving.get(socket);
      if (!bodies) {
        bodies = new Map();
        arriving.set(socket, bodies);
      }
      bodies.set(request, response);
      // The first body of the connection still arriving starts a window (a later one joins it).
      if (bodies.size === 1) watch(socket, bodies);
      const overdue = setTimeout(() => cut(request, response), limits.requestTimeoutMs);
      const done = () => {
        clearTimeout(overdue);
        bodies.delete(request);
      };
      stream.once('end', done);
      stream.once('close', done);
    },
  };
}

function listen(server: NetServer, at: { port: number; host: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
}

/** `GET /metrics` for services whose main port is gRPC; with `token` (GW_METRICS_TOKEN) only for its bearer. */
export function metricsHandler(
  metrics: { registry: { metrics(): Promise<string>; contentType: string } },
  token?: string,
): RequestHandler {
  return (request, response) => {
    if (request.url !== '/metrics') return false;
    if (!carriesToken(request.headers, token)) {
      sendError(response, metricsTokenRequired(), newRequestId());
      return true;
    }
    metrics.registry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': metrics.registry.contentType });
      response.end(text);
    });
    return true;
  };
}

/**
 * `GET /health/live` and `GET /health/ready` (docs/kubernetes.md "Probes") for services whose main port does not
 * serve them: open to every caller, as the kubelet probes without credentials; 200, or 503 with the reason.
 */
export function probesHandler(probes: Probes): RequestHandler {
  return (request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/health/live') {
      const report = probes.liveness();
      sendJson(response, probeStatus(report), report);
      return true;
    }
    if (path !== '/health/ready') return false;
    probes.readiness().then((report) => sendJson(response, probeStatus(report), report));
    return true;
  };
}
