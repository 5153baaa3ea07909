// The printed tables of `pnpm bench:netns`: figures per delay and target, what each delay added (and so how many
// one-way crossings a request makes), and the round trips counted per request. bench/README.md explains them.
import type { MeasureResult } from './netns-load.ts';

/** One target measured at one delay, with its counters per upstream call (warm-ups included). */
export interface TargetRun {
  delayMs: number;
  target: string;
  result: MeasureResult;
  /** INFO commandstats by command: a script's own call and the commands it ran inside are all counted. */
  redisCommandsPerRequest: Record<string, number>;
  /** Packets in and out of each namespace's veth (TCP ACKs included). */
  packetsPerRequest: Record<string, number>;
  cpuUsPerRequest: Record<string, number>;
}

/** Round trips per request of one target, counted apart from the measurement (serial, no delay). */
export interface RoundTrips {
  target: string;
  requests: number;
  errors: number;
  /** The ingress's gRPC calls by method. */
  grpc: Record<string, number>;
  /** Commands Redis received from each client (`<role> <command>`): one round trip each, pipelines aside. */
  redis: Record<string, number>;
  /** Commands Lua scripts ran inside Redis: no round trips. */
  scriptCommands: number;
}

interface ReportInput {
  header: string;
  params: { delays: number[]; serial: number; concurrency: number; durationMs: number; streams: number };
  runs: TargetRun[];
  roundTrips: RoundTrips[];
}

const ms = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : value < 10 ? value.toFixed(3) : value.toFixed(1);
const signedMs = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : (value < 0 ? '-' : '+') + ms(Math.abs(value));
const count = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(1);

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column <= 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  '),
    )
    .join('\n');
}

const p50 = (run: TargetRun | undefined) => run?.result.serial.latency.p50 ?? Number.NaN;
const chunkP50 = (run: TargetRun | undefined) => run?.result.firstChunk.latency.p50 ?? Number.NaN;

function figures(
  input: ReportInput,
  find: (delayMs: number, target: string) => TargetRun | undefined,
): string {
  const c = input.params.concurrency;
  return table([
    [
      'delay/hop',
      'target',
      'serial p50',
      'p99',
      `req/s c=${c}`,
      '1st chunk p50',
      'p50 − direct',
      '1st chunk − direct',
      'errors',
    ],
    ...input.runs.map((run) => {
      const direct = find(run.delayMs, 'direct');
      const gw = run.target !== 'direct';
      return [
        `${run.delayMs} ms`,
        run.target,
        ms(p50(run)),
        ms(run.result.serial.latency.p99),
        run.result.throughput.rps.toFixed(0),
        ms(chunkP50(run)),
        gw ? signedMs(p50(run) - p50(direct)) : '',
        gw ? signedMs(chunkP50(run) - chunkP50(direct)) : '',
        String(run.result.errors),
      ];
    }),
  ]);
}

/**
 * What a delay d added to each target's p50 over the same target at the smallest delay, divided by d: the
 * one-way crossings on the request's critical path (direct: client → mock → client, 2). Over direct: the
 * crossings gw adds.
 */
function crossings(input: ReportInput, find: (delayMs: number, target: string) => TargetRun | undefined) {
  const base = Math.min(...input.params.delays);
  const rows = [
    [
      'target',
      'delay/hop',
      'p50 added',
      'crossings',
      'over direct',
      '1st chunk added',
      'crossings',
      'over direct',
    ],
  ];
  for (const delayMs of input.params.delays.filter((delay) => delay > base)) {
    const d = delayMs - base;
    const added = (target: string, value: (run: TargetRun | undefined) => number) =>
      value(find(delayMs, target)) - value(find(base, target));
    for (const target of ['direct', 'cluster', 'cluster+vk']) {
      if (!find(delayMs, target)) continue;
      const p50Added = added(target, p50);
      const chunkAdded = added(target, chunkP50);
      const gw = target !== 'direct';
      rows.push([
        target,
        `${delayMs} ms`,
        signedMs(p50Added),
        count(p50Added / d),
        gw ? count((p50Added - added('direct', p50)) / d) : '',
        signedMs(chunkAdded),
        count(chunkAdded / d),
        gw ? count((chunkAdded - added('direct', chunkP50)) / d) : '',
      ]);
    }
  }
  return rows.length > 1
    ? table(rows)
    : `(one delay only: no per-hop cost; BENCH_NETNS_DELAYS=${base},… for it)`;
}

const list = (entries: ReadonlyArray<readonly [string, number]>, digits = 2) =>
  entries.length === 0
    ? 'none'
    : entries.map(([name, value]) => `${name} ${value.toFixed(digits)}`).join(', ');
const sum = (values: Record<string, number>) =>
  Object.values(values).reduce((total, value) => total + value, 0);

/** Round trips counted per request, and packets and CPU per request averaged over the delays, per target. */
function counted(input: ReportInput): string[] {
  const lines: string[] = [];
  const average = (runs: TargetRun[], pick: (run: TargetRun) => Record<string, number>) => {
    const sums: Record<string, number> = {};
    for (const run of runs) {
      for (const [name, value] of Object.entries(pick(run))) sums[name] = (sums[name] ?? 0) + value;
    }
    return Object.entries(sums)
      .map(([name, total]) => [name, total / runs.length] as const)
      .filter(([, value]) => value >= 0.05)
      .sort((a, b) => b[1] - a[1]);
  };
  const significant = (values: Record<string, number>) =>
    Object.entries(values)
      .filter(([, value]) => value >= 0.01)
      .sort((a, b) => b[1] - a[1]);
  for (const target of ['direct', 'cluster', 'cluster+vk']) {
    const runs = input.runs.filter((run) => run.target === target);
    const trips = input.roundTrips.find((entry) => entry.target === target);
    if (runs.length === 0) continue;
    lines.push(`${target}, per request:`);
    if (trips && target !== 'direct') {
      lines.push(`  gRPC calls by the ingress: ${list(significant(trips.grpc))}`);
      lines.push(
        `  Redis round trips by client: ${list(significant(trips.redis))}; commands run inside scripts ${trips.scriptCommands.toFixed(2)} (no round trips)`,
      );
      const total = 2 + sum(trips.grpc) + sum(trips.redis);
      lines.push(
        `  round trips in all: client + upstream 2 + gRPC ${sum(trips.grpc).toFixed(2)} + Redis ${sum(trips.redis).toFixed(2)} = ${total.toFixed(2)}, at most ${(2 * total).toFixed(1)} one-way crossings if every one were on the critical path (direct: 2)`,
      );
    }
    lines.push(
      `  packets through each veth: ${list(
        average(runs, (run) => run.packetsPerRequest),
        1,
      )}`,
    );
    lines.push(
      `  CPU µs: ${list(
        average(runs, (run) => run.cpuUsPerRequest),
        0,
      )}`,
    );
  }
  return lines;
}

export function formatReport(input: ReportInput): string {
  const find = (delayMs: number, target: string) =>
    input.runs.find((run) => run.delayMs === delayMs && run.target === target);
  const { serial, concurrency, durationMs, streams } = input.params;
  const lines = [
    '',
    input.header,
    `each service, Redis, the mock and the client in its own network namespace; delay on every veth's egress, so a one-way hop pays it once`,
    `serial: ${serial} requests; throughput: c=${concurrency} for ${durationMs} ms; first chunk: ${streams} serial streams; latencies in ms`,
    '',
    figures(input, find),
    '',
    'what the delay added to p50 (over the smallest delay); crossings = added / delay: one-way hops on the critical path',
    crossings(input, find),
    '',
    `round trips: ${input.roundTrips[0]?.requests ?? 0} serial requests per target at no delay, apart from the measurement (Redis under MONITOR); packets and CPU: the measured phases, averaged over the delays`,
    ...counted(input),
  ];
  for (const trips of input.roundTrips) {
    if (trips.errors > 0) lines.push(`round-trip count of ${trips.target}: ${trips.errors} failed requests`);
  }
  for (const run of input.runs) {
    if (run.result.errors === 0) continue;
    lines.push(`${run.delayMs} ms ${run.target}: ${run.result.errors} failed requests; first ones:`);
    for (const sample of run.result.errorSamples.slice(0, 5)) lines.push(`  ${JSON.stringify(sample)}`);
  }
  return lines.join('\n');
}
