// The load generator of `pnpm bench:netns`, run inside the client's network namespace
// (`ip netns exec <client> node bench/netns-load.ts '<job JSON>'`): bench/load.ts's phases against one target,
// the mock's counters and the ingress's gRPC call counts around them, one JSON line on stdout.
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { concurrent, type ErrorSample, firstChunk, type LatencyStats, serial, summarize } from './load.ts';

/** Wait until `base` answers GET /health 200 and each of `probes` (a chat request) 200. */
interface ReadyJob {
  kind: 'ready';
  base: string;
  path: string;
  body: string;
  probes: Array<Record<string, string>>;
  timeoutMs: number;
}

export interface MeasureJob {
  kind: 'measure';
  url: string;
  body: string;
  streamBody: string;
  headers: Record<string, string>;
  serial: number;
  serialWarmup: number;
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  streams: number;
  streamWarmup: number;
  /** The mock's `/__stats`: upstream calls during the whole job. */
  statsUrl: string;
  /** The ingress's `/metrics`, for its gRPC client calls by method (absent for the direct target). */
  metricsUrl?: string;
}

export type Job = ReadyJob | MeasureJob;

interface Phase {
  requests: number;
  errors: number;
  latency: LatencyStats;
}

export interface MeasureResult {
  serial: Phase;
  throughput: Phase & { ok: number; rps: number };
  firstChunk: Phase;
  /** Failures of every phase, warm-ups included. */
  errors: number;
  errorSamples: ErrorSample[];
  /** Calls the mock answered during the job (warm-ups included): the requests the per-request counts divide by. */
  upstreamCalls: number;
  /** gRPC calls the ingress made during the job, by method. */
  grpcCalls: Record<string, number>;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const { statusCode, body } = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  return { status: statusCode, text: await body.text() };
}

async function upstreamCalls(statsUrl: string): Promise<number> {
  const { status, text } = await get(statsUrl);
  if (status !== 200) throw new Error(`GET ${statsUrl}: ${status}`);
  return (JSON.parse(text) as { requests: number }).requests;
}

/** `gw_grpc_client_duration_seconds_count` by method: one per call the ingress made to another service. */
async function grpcCalls(metricsUrl: string | undefined): Promise<Record<string, number>> {
  if (!metricsUrl) return {};
  const { status, text } = await get(metricsUrl);
  if (status !== 200) throw new Error(`GET ${metricsUrl}: ${status}`);
  const calls: Record<string, number> = {};
  for (const match of text.matchAll(
    /^gw_grpc_client_duration_seconds_count\{[^}]*method="([^"]+)"[^}]*\} (\d+)/gm,
  )) {
    calls[match[1]!] = (calls[match[1]!] ?? 0) + Number(match[2]);
  }
  return calls;
}

async function ready(job: ReadyJob): Promise<{ readyMs: number }> {
  const begun = performance.now();
  const deadline = begun + job.timeoutMs;
  let last = '';
  for (const headers of [undefined, ...job.probes]) {
    for (;;) {
      try {
        if (headers === undefined) {
          const { status } = await get(`${job.base}/health`);
          if (status === 200) break;
          last = `/health answered ${status}`;
        } else {
          const probe = await serial(job.base + job.path, job.body, 1, { headers, phase: 'startup probe' });
          if (probe.errors === 0) break;
          last = JSON.stringify(probe.errorSamples[0]);
        }
      } catch (error) {
        last = (error as Error).message;
      }
      if (performance.now() > deadline)
        throw new Error(`${job.base} not ready in ${job.timeoutMs} ms: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { readyMs: Math.round(performance.now() - begun) };
}

async function measure(job: MeasureJob): Promise<MeasureResult> {
  const options = { headers: job.headers };
  const samples: ErrorSample[] = [];
  let errors = 0;
  const count = <T extends { errors: number; errorSamples: ErrorSample[] }>(result: T): T => {
    errors += result.errors;
    samples.push(...result.errorSamples);
    return result;
  };
  const callsBefore = await upstreamCalls(job.statsUrl);
  const grpcBefore = await grpcCalls(job.metricsUrl);

  count(await serial(job.url, job.body, job.serialWarmup, { ...options, phase: 'serial warm-up' }));
  const serialRun = count(await serial(job.url, job.body, job.serial, { ...options, phase: 'serial' }));
  if (job.warmupMs > 0) {
    const settings = { concurrency: job.concurrency, durationMs: job.warmupMs };
    count(await concurrent(job.url, job.body, settings, { ...options, phase: 'throughput warm-up' }));
  }
  const settings = { concurrency: job.concurrency, durationMs: job.durationMs };
  const load = count(await concurrent(job.url, job.body, settings, { ...options, phase: 'throughput' }));
  count(await firstChunk(job.url, job.streamBody, job.streamWarmup, { ...options, phase: 'stream warm-up' }));
  const streams = count(
    await firstChunk(job.url, job.streamBody, job.streams, { ...options, phase: 'first chunk' }),
  );

  const grpcAfter = await grpcCalls(job.metricsUrl);
  return {
    serial: {
      requests: serialRun.requests,
      errors: serialRun.errors,
      latency: summarize(serialRun.latencies),
    },
    throughput: {
      requests: load.requests,
      errors: load.errors,
      ok: load.ok,
      rps: load.rps,
      latency: summarize(load.latencies),
    },
    firstChunk: { requests: streams.requests, errors: streams.errors, latency: summarize(streams.latencies) },
    errors,
    errorSamples: samples.slice(0, 10),
    upstreamCalls: (await upstreamCalls(job.statsUrl)) - callsBefore,
    grpcCalls: Object.fromEntries(
      Object.entries(grpcAfter).map(([method, calls]) => [method, calls - (grpcBefore[method] ?? 0)]),
    ),
  };
}

const job = JSON.parse(process.argv[2] ?? '') as Job;
const result = job.kind === 'ready' ? await ready(job) : await measure(job);
process.stdout.write(`${JSON.stringify(result)}\n`);
