import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { waitFor } from './wait-for.ts';

/**
 * A loopback OTLP/HTTP traces receiver for tests: takes what an OTLP/HTTP JSON exporter posts to `/v1/traces`,
 * keeps every body as received (to search for what must never be there), and decodes its spans, each with the
 * `service.name` of its resource.
 */

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string | number }
  | { doubleValue: number }
  | { arrayValue: { values?: AnyValue[] } };

const anyValueSchema: z.ZodType<AnyValue> = z.lazy(() =>
  z.union([
    z.object({ stringValue: z.string() }),
    z.object({ boolValue: z.boolean() }),
    z.object({ intValue: z.union([z.string(), z.number()]) }),
    z.object({ doubleValue: z.number() }),
    z.object({ arrayValue: z.object({ values: z.array(anyValueSchema).optional() }) }),
  ]),
);

const attributesSchema = z.array(z.object({ key: z.string(), value: anyValueSchema })).default([]);

const exportRequestSchema = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: attributesSchema }).default({ attributes: [] }),
      scopeSpans: z.array(
        z.object({
          spans: z.array(
            z.object({
              traceId: z.string(),
              spanId: z.string(),
              parentSpanId: z.string().optional(),
              name: z.string(),
              kind: z.number().default(0),
              attributes: attributesSchema,
              status: z
                .object({ code: z.number().default(0), message: z.string().optional() })
                .default({ code: 0 }),
            }),
          ),
        }),
      ),
    }),
  ),
});

export type AttributeValue = string | number | boolean | AttributeValue[];

/** One span as the receiver decoded it; ids as lowercase hex. */
export interface ReceivedSpan {
  /** `service.name` of the span's resource. */
  service: string;
  traceId: string;
  spanId: string;
  /** Absent on a root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string | undefined };
}

function decodeValue(value: AnyValue): AttributeValue {
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  return (value.arrayValue.values ?? []).map(decodeValue);
}

function decodeAttributes(
  attributes: Array<{ key: string; value: AnyValue }>,
): Record<string, AttributeValue> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, decodeValue(value)]));
}

/** OTLP/JSON carries ids as hex; a base64 id (protobuf-style JSON) is turned into hex. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      const text = raw.toString('utf8');
      bodies.push(text);
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {}
      const parsed = exportRequestSchema.safeParse(document);
      if (!parsed.success) {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      for (const resourceSpans of parsed.data.resourceSpans) {
        const resource = decodeAttributes(resourceSpans.resource.attributes);
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              service: String(resource['service.name'] ?? ''),
              traceId: hexId(span.traceId)!,
              spanId: hexId(span.spanId)!,
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: decodeAttributes(span.attributes),
              status: span.status,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The traces URL to configure (`tracing.endpoint`). */
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    /** Every export request's body, as received. */
    bodies,
    /** The spans of a trace, once `ready` says they are all there. */
    async trace(
      traceId: string,
      ready: (spans: ReceivedSpan[]) => boolean,
      timeoutMs = 15_000,
    ): Promise<ReceivedSpan[]> {
      const of = () => spans.filter((span) => span.traceId === traceId);
      await waitFor(() => ready(of()), { timeoutMs, intervalMs: 50 }).catch(() => {});
      return of();
    },
    clear(): void {
      spans.length = 0;
      bodies.length = 0;
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;
