import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type LogRecord, type LogTail, logTailParamsSchema, matchesLogFilter } from '@gw/logs';
import { GatewayError, toGatewayError, validate } from '@gw/shared';
import { WebSocketServer } from 'ws';
import type { Principal } from '../access/admin-principal.ts';
import { teamScopedLogFilter } from './logs-admin.ts';

export interface LogsStreamOptions {
  /** The admin API's authentication and permission check (401 or 403 before the upgrade). */
  authorize: (request: IncomingMessage) => Promise<Principal>;
  /** Records as they are written; none when logs are off here (the upgrade is then refused with 503). */
  tail?: LogTail | undefined;
  /** Why there is no tail, as the refusal says it. */
  unavailable?: string | undefined;
  /** Bytes a client may leave unread before it is closed with 1013 (try again later). 1 MiB by default. */
  maxBufferedBytes?: number;
}

const PATH = '/api/logs/stream';
/**
 * A client closed for being slow gets this long to read what was sent and the close frame before its socket is
 * cut; nothing more is queued for it meanwhile.
 */
const CLOSE_GRACE_MS = 30_000;

/** Answers an upgrade with an HTTP error (before any WebSocket exists) and closes the socket. */
function refuse(socket: Duplex, error: GatewayError): void {
  const body = JSON.stringify({ error: { type: error.type, message: error.message } });
  socket.end(
    `HTTP/1.1 ${error.status} ${error.type}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * `GET /api/logs/stream`: the live tail over WebSocket. Authenticated like the admin API (refused with 401 or
 * 403 before the upgrade), filtered with `/api/logs`'s parameters (a bad one: 400 before the upgrade). Each
 * record matching the filter is sent as one JSON text message. A client that leaves more than
 * maxBufferedBytes unread is closed with 1013: the gateway never buffers for it without bound.
 */
export function createLogsStream(options: LogsStreamOptions) {
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const server = new WebSocketServer({ noServer: true, maxPayload: 4096 });

  /** Takes the upgrade of `/api/logs/stream`; false for any other path. */
  function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(request.url ?? '/', 'http://admin');
    if (url.pathname !== PATH) return false;
    // A socket that goes away while the caller is authenticated is not an error of the gateway's.
    socket.on('error', () => {});
    options
      .authorize(request)
      .then((principal) => {
        const filter = validate(logTailParamsSchema, teamScopedLogFilter(principal, url.searchParams));
        accept(request, socket, head, filter);
      })
      .catch((error: unknown) => refuse(socket, toGatewayError(error)));
    return true;
  }

  function accept(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    filter: ReturnType<typeof logTailParamsSchema.parse>,
  ): void {
    const { tail } = options;
    if (!tail) {
      refuse(
        socket,
        new GatewayError({
          type: 'service_unavailable',
          message: options.unavailable ?? 'request logs are off',
        }),
      );
      return;
    }
    if (socket.destroyed) return;
    server.handleUpgrade(request, socket, head, (client) => {
      let closing = false;
      const send = (records: readonly LogRecord[]) => {
        if (closing) return;
        for (const record of records) {
          if (!matchesLogFilter(record, filter)) continue;
          if (client.bufferedAmount > maxBuffered) {
            closing = true;
            stop();
            client.close(1013, 'too slow: the live tail does not wait for a client');
            setTimeout(() => client.terminate(), CLOSE_GRACE_MS).unref();
            return;
          }
          client.send(JSON.stringify(record));
        }
      };
      const stop = tail.subscribe(send);
      client.on('close', stop);
      client.on('error', stop);
      // Messages from the client mean nothing here.
      client.on('message', () => {});
    });
  }

  return {
    upgrade,
    /** Closes every live tail (shutdown). */
    close(): void {
      for (const client of server.clients) client.terminate();
      server.close();
    },
  };
}
