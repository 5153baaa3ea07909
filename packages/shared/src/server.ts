import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  createServer as createHttp2Server,
  type Http2Server,
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
import { ConfigError } from './config/gateway-config.ts';
import { GatewayError, invalidRequest, noEndpoint } from './errors/gateway-error.ts';
import { sendError } from './errors/http.ts';
import { requestTargetProblem } from './http/request-target.ts';
import { newRequestId } from './ids.ts';
import type { Logger } from './logger.ts';

export interface Closable {
  /** Stops accepting work, waits for what is in flight up to the deadline, then forces. */
  close(deadlineMs: number): Promise<void>;
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The answer for a path no handler claimed. */
function notFoundHandler(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '/').split('?')[0];
  sendError(response, noEndpoint(request.method, path ?? '/'), newRequestId());
}

/** The first bytes of every HTTP/2 connection (RFC 9113 §3.4); an HTTP/1 request never starts with them. */
const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * Hands a new connection to the HTTP/1.1 or the HTTP/2 server by its first bytes (h2c with prior
 * knowledge, as the AWS SDK's default handler speaks it). Only the first packet of a connection is
 * looked at; keep-alive requests after it cost nothing more.
 */
function dispatchConnection(socket: Socket, http1: Server, http2: Http2Server): void {
  let received: Buffer | undefined;
  const onData = (chunk: Buffer) => {
    received = received ? Buffer.concat([received, chunk]) : chunk;
    const compared = Math.min(received.length, HTTP2_PREFACE.length);
    const preface = received.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared));
    if (preface && received.length < HTTP2_PREFACE.length) return;
    socket.off('data', onData);
    socket.pause();
    socket.unshift(received);
    if (preface) {
      // The HTTP/2 session reads what the socket already buffered itself (nodejs/node#35475).
      http2.emit('connection', socket);
    } else {
      http1.emit('connection', socket);
      process.nextTick(() => socket.resume());
    }
  };
  socket.on('data', onData);
}

/**
 * Serves handlers over HTTP/1.1 and, with `http2: true`, also over cleartext HTTP/2 on the same port (the
 * first bytes of each connection decide); handlers see the same request and response API either way
 * (node:http2's compatibility API).
 */
export async function startHttpServer(options: {
  port: number;
  host: string;
  handlers: RequestHandler[];
  http2?: boolean;
}): Promise<Closable & { server: Server; port: number }> {
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
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  if (!options.http2) {
    await listen(server, options);
    return {
      server,
      port: (server.address() as AddressInfo).port,
      close: (deadlineMs) =>
        new Promise<void>((resolve) => {
          const force = setTimeout(() => server.closeAllConnections(), deadlineMs);
          // A keep-alive connection whose response finishes during the drain turns idle later, and Node does
          // not close it by itself: sweep idle connections until the server has closed (no hot-path cost).
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          server.close(() => {
            clearTimeout(force);
            clearInterval(sweep);
            resolve();
          });
          server.closeIdleConnections();
        }),
    };
  }

  const http2 = createHttp2Server(
    {},
    handle as unknown as (request: Http2ServerRequest, response: Http2ServerResponse) => void,
  );
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
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    dispatchConnection(socket, server, http2);
  });
  await listen(listener, options);
  return {
    server,
    port: (listener.address() as AddressInfo).port,
    close: (deadlineMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
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
          resolve();
        });
        // Stops the HTTP/1.1 server's timers and closes its idle keep-alive connections.
        server.close(() => {});
        for (const session of sessions) session.close();
      }),
  };
}

function listen(server: NetServer, at: { port: number; host: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
}

/**
 * On SIGTERM or SIGINT: run the shutdown steps in order (stop accepting and drain first, then release
 * connections), bounded by GW_SHUTDOWN_TIMEOUT_MS, then exit.
 */
export function onShutdown(options: {
  logger: Logger;
  /** GW_SHUTDOWN_TIMEOUT_MS: how long draining may take before the process is stopped. */
  deadlineMs: number;
  steps: Array<(deadlineMs: number) => Promise<void>>;
}): void {
  const { logger, deadlineMs, steps } = options;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const hardStop = setTimeout(() => {
      logger.warn('drain deadline passed; exiting');
      process.exit(1);
    }, deadlineMs + 5_000);
    hardStop.unref();
    (async () => {
      for (const step of steps) await step(deadlineMs);
    })().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * Whether an error says all there is in its message: a bad environment or config (ConfigError), a refusal
 * (GatewayError), or the system refusing a resource (a port in use, Redis unreachable: a Node error code,
 * here or in its cause). Anything else is a bug worth its stack.
 */
function explainsItself(error: unknown): error is Error {
  if (error instanceof ConfigError || error instanceof GatewayError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' || (error.cause !== undefined && explainsItself(error.cause));
}

/**
 * Ends a process that could not start: exit code 1 and one line on stderr, the same for every process,
 * `gw-<service> cannot start: <what is wrong>`. Only a bug prints its stack.
 */
export function refuseStart(service: string, error: unknown): never {
  const reason = explainsItself(error)
    ? error.message.replace(/\s*\n\s*/g, ' ').trim()
    : error instanceof Error
      ? (error.stack ?? error.message)
      : String(error);
  process.stderr.write(`gw-${service} cannot start: ${reason}\n`);
  process.exit(1);
}

/**
 * Runs a service's start-up. A failure (a missing or bad variable, a bad config file, a port in use, Redis
 * unreachable) ends the process through refuseStart.
 */
export async function startService(logger: Logger, start: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (error) {
    refuseStart(String(logger.bindings()['service'] ?? 'gateway'), error);
  }
}

/** `GET /metrics` for services whose main port is gRPC. */
export function metricsHandler(metrics: {
  registry: { metrics(): Promise<string>; contentType: string };
}): RequestHandler {
  return (request, response) => {
    if (request.url !== '/metrics') return false;
    metrics.registry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': metrics.registry.contentType });
      response.end(text);
    });
    return true;
  };
}
