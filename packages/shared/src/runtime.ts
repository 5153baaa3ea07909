import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { GatewayError } from './errors/gateway-error.ts';
import { sendError } from './errors/http.ts';
import { newRequestId } from './ids.ts';
import type { Logger } from './logger.ts';

export interface Closable {
  /** Stops accepting work, waits for what is in flight up to the deadline, then forces. */
  close(deadlineMs: number): Promise<void>;
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The answer for a path no handler claimed. */
export function notFoundHandler(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '/').split('?')[0];
  sendError(
    response,
    new GatewayError({ type: 'not_found', status: 404, message: `no endpoint at ${request.method} ${path}` }),
    newRequestId(),
  );
}

export async function startHttpServer(options: {
  port: number;
  host: string;
  handlers: RequestHandler[];
}): Promise<Closable & { server: Server; port: number }> {
  const server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
    for (const handler of options.handlers) if (handler(request, response)) return;
    notFoundHandler(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
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
