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
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { type GatewayConfig, loadGatewayConfig } from './config/gateway-config.ts';
import { noEndpoint } from './errors/gateway-error.ts';
import { sendError } from './errors/http.ts';
import { newRequestId } from './ids.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createStore, type Store } from './store/index.ts';

export interface Closable {
  /** Stops accepting work, waits for what is in flight up to the deadline, then forces. */
  close(deadlineMs: number): Promise<void>;
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The answer for a path no handler claimed. */
export function notFoundHandler(request: IncomingMessage, response: ServerResponse): void {
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
  const listener = createNetServer({ noDelay: true }, (socket) => dispatchConnection(socket, server, http2));
  await listen(listener, options);
  return {
    server,
    port: (listener.address() as AddressInfo).port,
    close: (deadlineMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.closeAllConnections();
          for (const session of sessions) session.destroy();
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

export async function startGrpcServer(options: {
  port: number;
  host: string;
  register: (server: GrpcServer) => void;
}): Promise<Closable & { port: number }> {
  const server = new GrpcServer({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  options.register(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    port,
    close: (deadlineMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, deadlineMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/**
 * On SIGTERM or SIGINT: run the shutdown steps in order (stop accepting and drain first, then release
 * connections), bounded by GW_SHUTDOWN_TIMEOUT_MS, then exit.
 */
export function onShutdown(logger: Logger, steps: Array<(deadlineMs: number) => Promise<void>>): void {
  const deadlineMs = Number(process.env['GW_SHUTDOWN_TIMEOUT_MS'] ?? 25_000);
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
 * Runs a service's start-up; a failure (bad config, unreachable Redis, port in use) ends the process with
 * one clear line instead of a stack trace.
 */
export async function startService(logger: Logger, start: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (error) {
    logger.fatal(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}

/** Reads a port from the environment with a default; a bad value fails start-up naming the variable. */
export function envPort(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`${name}: '${value}' is not a port number`);
  return port;
}

/** Required address of another service, e.g. GW_ROUTER_ADDR=127.0.0.1:7101 (comma-separated for several). */
export function envAddress(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the address of the service (host:port)`);
  return value;
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

/**
 * The `main` of a gRPC service (router, governance): config, store and metrics from the environment, the
 * gRPC server on `portVariable`, `/metrics` on GW_METRICS_PORT, and an orderly shutdown on SIGTERM.
 */
export async function runGrpcService<Core extends { close(): Promise<void> }>(options: {
  service: string;
  portVariable: string;
  defaultPort: number;
  createCore: (dependencies: {
    config: GatewayConfig;
    store: Store;
    metrics: Metrics;
    logger: Logger;
  }) => Promise<Core>;
  register: (server: GrpcServer, core: NoInfer<Core>) => void;
}): Promise<void> {
  const logger = createLogger({ service: options.service });
  await startService(logger, async () => {
    const config = await loadGatewayConfig();
    const store = await createStore(process.env);
    const metrics = createMetrics({ service: options.service });
    const core = await options.createCore({ config, store, metrics, logger });
    const host = process.env['GW_HOST'] ?? '0.0.0.0';
    const grpc = await startGrpcServer({
      port: envPort(options.portVariable, options.defaultPort),
      host,
      register: (server) => options.register(server, core),
    });
    const http = await startHttpServer({
      port: envPort('GW_METRICS_PORT', 0),
      host,
      handlers: [metricsHandler(metrics)],
    });
    logger.info({ grpcPort: grpc.port, metricsPort: http.port }, `${options.service} listening`);
    onShutdown(logger, [
      (deadline) => grpc.close(deadline),
      (deadline) => http.close(deadline),
      () => core.close(),
      () => store.close(),
    ]);
  });
}
