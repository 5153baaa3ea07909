// The span exporter's wire and its answers to a collector: what it posts, what it retries, what it gives up on.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { otlpSpanExporter } from './otlp-exporter.ts';

interface Received {
  headers: IncomingMessage['headers'];
  body: { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
}

const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A collector answering each export with the next of `answers` (the last one repeats). */
async function collector(answers: Array<(response: ServerResponse) => void>) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      (answers[received.length - 1] ?? answers.at(-1)!)(response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, received };
}

/** Two ended spans, as the batch processor hands them to an exporter. */
function spans(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const provider = new TracerProvider({
    spanProcessors: [
      {
        onStart: () => {},
        onEnd: (span: ReadableSpan) => void ended.push(span),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
  });
  const tracer = provider.getTracer('test');
  for (const name of ['first', 'second']) tracer.startSpan(name).end();
  return ended;
}

function exportWith(exporter: ReturnType<typeof otlpSpanExporter>) {
  return new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans(), resolve));
}

const ok = (response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end('{}');

describe('OTLP span exporter', () => {
  it('posts the spans as OTLP JSON with the configured headers', async () => {
    const { url, received } = await collector([ok]);
    const exporter = otlpSpanExporter({ url, headers: { authorization: 'Bearer t' }, timeoutMillis: 2_000 });
    expect((await exportWith(exporter)).code).toBe(ExportResultCode.SUCCESS);
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(received[0]!.headers.authorization).toBe('Bearer t');
    const names = received[0]!.body.resourceSpans.flatMap((resource) =>
      resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)),
    );
    expect(names).toEqual(['first', 'second']);
    await exporter.shutdown();
  });

  it('tries again after a 503 with Retry-After, and succeeds', async () => {
    const busy = (response: ServerResponse) => response.writeHead(503, { 'retry-after': '0' }).end();
    const { url, received } = await collector([busy, ok]);
    const exporter = otlpSpanExporter({ url, headers: {}, timeoutMillis: 5_000 });
    expect((await exportWith(exporter)).code).toBe(ExportResultCode.SUCCESS);
    expect(received).toHaveLength(2);
    await exporter.shutdown();
  });

  it('gives up at once on a 400, with the status in the error', async () => {
    const bad = (response: ServerResponse) => response.writeHead(400).end('bad spans');
    const { url, received } = await collector([bad]);
    const exporter = otlpSpanExporter({ url, headers: {}, timeoutMillis: 5_000 });
    const result = await exportWith(exporter);
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error).toMatchObject({ code: 400, data: 'bad spans' });
    expect(received).toHaveLength(1);
    await exporter.shutdown();
  });

  it('fails within its timeout when the collector cannot be reached', async () => {
    const exporter = otlpSpanExporter({
      url: 'http://127.0.0.1:9/v1/traces',
      headers: {},
      timeoutMillis: 300,
    });
    const started = performance.now();
    expect((await exportWith(exporter)).code).toBe(ExportResultCode.FAILED);
    expect(performance.now() - started).toBeLessThan(2_000);
    await exporter.shutdown();
  });
});
