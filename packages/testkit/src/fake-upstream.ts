import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request as a fake upstream received it: the raw bytes, and the JSON body when it was JSON. */
export interface FakeUpstreamRequest {
  method: string;
  /** Path including the query string, percent-encoding as received. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the text when it is not JSON. */
  body: unknown;
  raw: Buffer;
}

/**
 * A scripted answer. `delayMs` is the upstream's own slowness (the behaviour a test exercises: drains,
 * timeouts, first-chunk latency), not a wait for synchronization.
 */
export type FakeUpstreamAnswer =
  | { status?: number; headers?: Record<string, string>; json: unknown; delayMs?: number }
  /** Raw server-sent event blocks, written one by one. */
  | {
      status?: number;
      headers?: Record<string, string>;
      sse: string[];
      delayMs?: number;
      hangAfter?: boolean;
    }
  /** OpenAI's `data: <event>` lines, written one by one. */
  | { status?: number; events: string[]; delayMs?: number; hangAfter?: boolean }
  /** Bytes written in pieces (binary answers, event-stream frames). */
  | { status?: number; headers?: Record<string, string>; chunks: Buffer[]; delayMs?: number }
  /** The connection is cut without an answer. */
  | { destroy: true }
  /** The test writes the answer itself (a provider's exact framing, split writes, hangs). */
  | { respond: (response: ServerResponse) => Promise<void> };

/**
 * One route of a fake: a request whose method and path (query string excluded) match gets its answer. A fake
 * of a provider is a list of routes; the first match wins.
 */
export interface FakeRoute {
  /** Any method when left out. */
  method?: string;
  path: RegExp;
  answer: (request: FakeUpstreamRequest) => FakeUpstreamAnswer;
}

/**
 * The one recording fake upstream of the test suites: every request is recorded (method, path, headers, body
 * and raw bytes), request bytes are counted as they arrive (so a test can prove an upload streams), and each
 * request gets the next scripted answer, or the answer of the first route it matches (404 when none does).
 */
export async function startFakeUpstream(routes: readonly FakeRoute[]) {
  const requests: FakeUpstreamRequest[] = [];
  const script: FakeUpstreamAnswer[] = [];
  let bytesReceived = 0;
  let aborted = 0;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytesReceived += chunk.length;
      notify();
    });
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      const recorded = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
        raw,
      };
      requests.push(recorded);
      response.on('close', () => {
        if (response.writableFinished) return;
        aborted++;
        notify();
      });
      const answer = script.shift() ?? route(routes, recorded);
      write(response, answer).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** Resolves once `condition` holds, checked whenever bytes arrive or a response is abandoned. */
  const until = (condition: () => boolean): Promise<void> =>
    condition()
      ? Promise.resolve()
      : new Promise((resolve) => {
          const check = () => {
            if (!condition()) return;
            listeners.delete(check);
            resolve();
          };
          listeners.add(check);
        });

  return {
    url,
    requests,
    /** Answers of the next requests, in order. */
    enqueue(...answers: FakeUpstreamAnswer[]) {
      script.push(...answers);
    },
    /** Drops the answers still queued (those a request did not take). */
    dropQueued() {
      script.length = 0;
    },
    last(): FakeUpstreamRequest {
      const request = requests[requests.length - 1];
      if (!request) throw new Error('the fake upstream received no request');
      return request;
    },
    /** Request body bytes received so far, across all requests. */
    get bytesReceived() {
      return bytesReceived;
    },
    /** Responses whose client went away before they ended (cancelled upstream calls). */
    get abortedCount() {
      return aborted;
    },
    /** Resolves once at least `count` request body bytes arrived in total. */
    waitForBytes: (count: number) => until(() => bytesReceived >= count),
    /** Resolves once more than `count` responses were abandoned by their client. */
    waitForAborted: (count: number) => until(() => aborted > count),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeUpstream = Awaited<ReturnType<typeof startFakeUpstream>>;

function route(routes: readonly FakeRoute[], request: FakeUpstreamRequest): FakeUpstreamAnswer {
  const path = request.path.split('?')[0] ?? '';
  const match = routes.find(
    (candidate) =>
      (candidate.method === undefined || candidate.method === request.method) && candidate.path.test(path),
  );
  if (match) return match.answer(request);
  return { status: 404, json: { error: { message: `the fake has no route for ${request.method} ${path}` } } };
}

async function writePieces(
  response: ServerResponse,
  pieces: Array<string | Buffer>,
  options: { delayMs?: number | undefined; hangAfter?: boolean | undefined },
): Promise<void> {
  for (const piece of pieces) {
    if (response.destroyed) return;
    response.write(piece);
    if (options.delayMs) await sleep(options.delayMs);
  }
  if (!options.hangAfter) response.end();
}

async function write(response: ServerResponse, answer: FakeUpstreamAnswer): Promise<void> {
  if ('respond' in answer) return answer.respond(response);
  if ('destroy' in answer) {
    response.socket?.destroy();
    return;
  }
  const status = answer.status ?? 200;
  if ('events' in answer) {
    response.writeHead(status, { 'content-type': 'text/event-stream' });
    return writePieces(
      response,
      answer.events.map((event) => `data: ${event}\n\n`),
      answer,
    );
  }
  if ('sse' in answer) {
    response.writeHead(status, { 'content-type': 'text/event-stream', ...answer.headers });
    return writePieces(response, answer.sse, answer);
  }
  if ('chunks' in answer) {
    response.writeHead(status, answer.headers ?? { 'content-type': 'application/octet-stream' });
    return writePieces(response, answer.chunks, answer);
  }
  if (answer.delayMs) await sleep(answer.delayMs);
  const payload = JSON.stringify(answer.json);
  response.writeHead(status, { 'content-type': 'application/json', ...answer.headers });
  response.end(payload);
}
