// The OTLP/HTTP (JSON) span exporter of gw's tracing: the SDK's export delegate and JSON serializer, with a
// transport that hands each serialized export to a thread of its own (otlp-export-worker.ts) which posts it.
// The reason is speed, not features: HTTP client code in the gateway's isolate (node:http's, or undici's with
// its own sockets and handlers) shares Node's stream, socket and HTTP internals with the server, and a few export
// requests were enough to make V8 deoptimize and recompile the server's hottest functions for the client's
// shapes: at any sampling ratio above 0, +6 to +20 µs of CPU a request and twice the compiler threads' work
// (docs/tracing.md). Serializing the spans here costs the server nothing of the kind (measured).
import { Worker } from 'node:worker_threads';
import {
  createOtlpNetworkExportDelegate,
  ExporterMetrics,
  type ExportResponse,
  getSharedConfigurationDefaults,
  type IExporterTransport,
  OTLPExporterBase,
  OTLPExporterError,
} from '@opentelemetry/otlp-exporter-base';
import { JsonTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { ExportJob, ExportOutcome } from './otlp-export-worker.ts';

/** Past an export's own timeout, how long the exporter waits for its thread's answer before calling it failed. */
const THREAD_GRACE_MS = 1_000;

/**
 * The transport: each export's bytes moved (not copied) to the export thread, its answer awaited. The thread is
 * started on the first export and does not keep the process alive; one that dies fails what it held and is
 * started again by the next export.
 */
function threadTransport(settings: { url: string; headers: Record<string, string> }): IExporterTransport {
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, (response: ExportResponse) => void>();
  const failAll = (message: string) => {
    for (const [id, answer] of pending) {
      pending.delete(id);
      answer({ status: 'failure', error: new Error(message) });
    }
  };
  const thread = () => {
    if (worker) return worker;
    const started = new Worker(new URL('./otlp-export-worker.ts', import.meta.url), { workerData: settings });
    started.unref();
    started.on('message', (outcome: ExportOutcome) => {
      const answer = pending.get(outcome.id);
      if (!answer) return;
      pending.delete(outcome.id);
      answer(toResponse(outcome));
    });
    const gone = (reason: string) => {
      if (worker === started) worker = undefined;
      failAll(reason);
    };
    started.on('error', (error) => gone(`the export thread failed: ${error.message}`));
    started.on('exit', (code) => gone(`the export thread exited (${code})`));
    worker = started;
    return started;
  };
  return {
    send(data, timeoutMillis) {
      const id = nextId++;
      return new Promise<ExportResponse>((resolve) => {
        const timer = setTimeout(() => {
          if (pending.delete(id))
            resolve({ status: 'failure', error: new Error('the export thread did not answer') });
        }, timeoutMillis + THREAD_GRACE_MS);
        timer.unref();
        pending.set(id, (response) => {
          clearTimeout(timer);
          resolve(response);
        });
        // Moved, not copied; a view into a larger buffer is copied first (moving its buffer would empty the rest).
        const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
        const job: ExportJob = { id, data: own, timeoutMillis };
        thread().postMessage(job, [own.buffer as ArrayBuffer]);
      });
    },
    shutdown() {
      const stopping = worker;
      worker = undefined;
      failAll('the exporter shut down');
      stopping?.terminate().catch(() => {});
    },
  };
}

/** The thread's answer as the SDK's export delegate reads it. */
function toResponse(outcome: ExportOutcome): ExportResponse {
  if (outcome.status === 'success')
    return outcome.data ? { status: 'success', data: outcome.data } : { status: 'success' };
  const error =
    outcome.error && new OTLPExporterError(outcome.error.message, outcome.error.code, outcome.error.data);
  if (outcome.status === 'retryable') {
    return {
      status: 'retryable',
      ...(error && { error }),
      ...(outcome.retryInMillis !== undefined && { retryInMillis: outcome.retryInMillis }),
    };
  }
  return { status: 'failure', error: error ?? new OTLPExporterError('export failed') };
}

/** The span exporter: OTLP/HTTP JSON to `url` (the full path, `/v1/traces` included), with `headers`. */
export function otlpSpanExporter(options: {
  url: string;
  headers: Record<string, string>;
  timeoutMillis: number;
}): SpanExporter {
  const configuration = { ...getSharedConfigurationDefaults(), timeoutMillis: options.timeoutMillis };
  const metrics = new ExporterMetrics<ReadableSpan[]>({
    componentType: 'otlp_http_json_span_exporter',
    metricsHelper: TraceExporterMetricsHelper,
    url: options.url,
    meterProvider: undefined,
    responseAttributesFromError: () => ({}),
  });
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpNetworkExportDelegate(configuration, JsonTraceSerializer, metrics, threadTransport(options)),
  );
}
