import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a fake upstream received it: the raw bytes, and the JSON body when it was JSON. */
export interface FakeUpstreamRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the text when it is not JSON. */
  body: unknown;
  raw: Buffer;
}

/** A scripted answer: JSON, raw server-sent event blocks, or bytes written in pieces (binary answers). */
export type FakeUpstreamAnswer =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  | { status?: number; headers?: Record<string, string>; sse: string[]; delayMs?: number }
  | { status?: number; headers?: Record<string, string>; chunks: Buffer[]; delayMs?: number };

/**
 * A fake provider on loopback: records every request (raw bytes included), counts request bytes as they
 * arrive (so a test can prove an upload is streamed, not buffered), and answers scripted answers in order,
 * or the default answer of the provider it imitates.
 */
export async function startFakeUpstream(defaultAnswer: (request: FakeUpstreamRequest) => FakeUpstreamAnswer) {
  const requests: FakeUpstreamRequest[] = [];
  const script: FakeUpstreamAnswer[] = [];
  let bytesReceived = 0;
  const byteListeners = new Set<() => void>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytesReceived += chunk.length;
      for (const listener of byteListeners) listener();
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
      void write(response, script.shift() ?? defaultAnswer(recorded));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    enqueue(...answers: FakeUpstreamAnswer[]) {
      script.push(...answers);
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
    /** Resolves once at least `count` request body bytes arrived in total. */
    waitForBytes(count: number): Promise<void> {
      if (bytesReceived >= count) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => {
          if (bytesReceived < count) return;
          byteListeners.delete(check);
          resolve();
        };
        byteListeners.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeUpstream = Awaited<ReturnType<typeof startFakeUpstream>>;

async function write(response: ServerResponse, answer: FakeUpstreamAnswer): Promise<void> {
  const status = answer.status ?? 200;
  if ('sse' in answer) {
    response.writeHead(status, { 'content-type': 'text/event-stream', ...answer.headers });
    for (const block of answer.sse) {
      if (response.destroyed) return;
      response.write(block);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    }
    response.end();
    return;
  }
  if ('chunks' in answer) {
    response.writeHead(status, answer.headers ?? { 'content-type': 'application/octet-stream' });
    for (const chunk of answer.chunks) {
      if (response.destroyed) return;
      response.write(chunk);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    }
    response.end();
    return;
  }
  const payload = JSON.stringify(answer.json);
  response.writeHead(status, { 'content-type': 'application/json', ...answer.headers });
  response.end(payload);
}
