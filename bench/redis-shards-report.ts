// The printed tables of `pnpm bench:shards` (redis-shards.ts): per phase, requests and admissions, commands and
// script calls per request and their spread over the masters; the central counters' calls (under MONITOR); each
// master's share, what it holds and what MONITOR saw of it. bench/README.md explains them.
import { table } from './harness.ts';
import type { ErrorSample } from './load.ts';

/** The hash tags of governance: each owner's counters, and the journal's 64 (`{res:n}`). */
export const OWNER_KINDS = ['key', 'team', 'customer', 'res'] as const;

/** One master: its slots, and how many of each kind of hash tag they hold. */
export interface MasterLayout {
  port: number;
  slots: Array<[number, number]>;
  owners: Record<(typeof OWNER_KINDS)[number], number>;
}

/** What MONITOR saw on one master in a window. */
export interface Monitored {
  /**
   * Per script: its round trips (EVALSHA), the calls they carried (an admission script's batch: its ARGV[1]), the
   * commands they ran inside and, of take-slice-2's calls, the reports (spend reported, nothing taken: a held
   * slice's renewal every second, and a settle's report of what it spent of the slices it touched).
   */
  scripts: Record<string, { roundTrips: number; calls: number; inner: number; reports: number }>;
  /** Commands sent by clients other than scripts (each a round trip unless pipelined), by name. */
  commands: Record<string, number>;
  /**
   * Every command (a script's call and those it ran) by the owner of its key's hash tag (`{key:…}`: key, team,
   * customer, res: the journal), `none` without one.
   */
  owners: Record<string, number>;
}

/** One measured phase: its load, admissions and every master's counts. */
export interface PhaseResult {
  name: string;
  monitored: boolean;
  requests: number;
  rps: number;
  errors: number;
  errorSamples: ErrorSample[];
  admissions: { local: number; exact: number };
  /** [seconds into the phase, seconds past the wall clock's minute, exact admissions] of each half second with any. */
  exactAt: Array<[number, number, number]>;
  /** Per master: what INFO commandstats and /proc counted in the phase. */
  masters: Array<{
    port: number;
    commands: number;
    scripts: number;
    /** INFO commandstats' calls by command in the phase. */
    byCommand: Record<string, number>;
    cpuMs: number | undefined;
  }>;
  /** Per master, with BENCH_MONITOR_*: what MONITOR saw. */
  monitor?: Monitored[];
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const share = (part: number, whole: number) => `${fixed((part / whole) * 100, 1)}%`;

/** Max over min of the masters' counts (1: even). */
function spread(values: number[]): number {
  return Math.max(...values) / Math.max(1, Math.min(...values));
}

function summaryTable(phases: PhaseResult[]): string {
  return table([
    [
      'phase',
      'req/s',
      'requests',
      'exact adm/req',
      'local adm/req',
      'script calls/req',
      'commands/req',
      'cmds max/min',
      'Redis CPU µs/req',
      'errors',
    ],
    ...phases.map((phase) => {
      const commands = phase.masters.reduce((sum, master) => sum + master.commands, 0);
      const scripts = phase.masters.reduce((sum, master) => sum + master.scripts, 0);
      const cpu = phase.masters.every((master) => master.cpuMs !== undefined)
        ? phase.masters.reduce((sum, master) => sum + master.cpuMs!, 0)
        : Number.NaN;
      return [
        phase.name,
        fixed(phase.rps, 0),
        String(phase.requests),
        fixed(phase.admissions.exact / phase.requests, 4),
        fixed(phase.admissions.local / phase.requests, 4),
        fixed(scripts / phase.requests),
        fixed(commands / phase.requests),
        fixed(spread(phase.masters.map((master) => master.commands))),
        fixed((cpu * 1000) / phase.requests, 0),
        String(phase.errors),
      ];
    }),
  ]);
}

function mastersTable(phase: PhaseResult, layout: MasterLayout[]) {
  const commands = phase.masters.reduce((sum, master) => sum + master.commands, 0);
  return table([
    [
      'master',
      'slots',
      'keys/teams/customers/journal',
      'commands/req',
      'share',
      'script calls/req',
      'CPU µs/req',
    ],
    ...phase.masters.map((counts, index) => {
      const place = layout[index]!.owners;
      return [
        `:${counts.port}`,
        layout[index]!.slots.map(([first, last]) => `${first}-${last}`).join(','),
        `${place.key}/${place.team}/${place.customer}/${place.res}`,
        fixed(counts.commands / phase.requests),
        share(counts.commands, commands),
        fixed(counts.scripts / phase.requests, 3),
        counts.cpuMs === undefined ? '—' : fixed((counts.cpuMs * 1000) / phase.requests, 0),
      ];
    }),
  ]);
}

function monitorTables(phase: PhaseResult): string[] {
  const seen = phase.monitor!;
  const perRequest = (value: number) => fixed(value / phase.requests, 3);
  const total = (pick: (master: Monitored) => number) => seen.reduce((sum, master) => sum + pick(master), 0);
  const scripts = [...new Set(seen.flatMap((master) => Object.keys(master.scripts)))].sort();
  const others = [...new Set(seen.flatMap((master) => Object.keys(master.commands)))].sort();
  return [
    table([
      [
        'per request',
        'round trips',
        'calls',
        'commands inside',
        ...seen.map((_, index) => `:${phase.masters[index]!.port} trips`),
      ],
      ...scripts.map((script) => [
        script,
        perRequest(total((master) => master.scripts[script]?.roundTrips ?? 0)),
        perRequest(total((master) => master.scripts[script]?.calls ?? 0)),
        perRequest(total((master) => master.scripts[script]?.inner ?? 0)),
        ...seen.map((master) => perRequest(master.scripts[script]?.roundTrips ?? 0)),
      ]),
      ...others.map((command) => [
        command,
        perRequest(total((master) => master.commands[command] ?? 0)),
        '',
        '',
        ...seen.map((master) => perRequest(master.commands[command] ?? 0)),
      ]),
    ]),
    '',
    table([
      ['commands/req by hash tag', 'key', 'team', 'customer', 'journal', 'other', 'total'],
      ...seen.map((master, index) => {
        const all = Object.values(master.owners).reduce((sum, count) => sum + count, 0);
        const known = OWNER_KINDS.map((kind) => master.owners[kind] ?? 0);
        return [
          `:${phase.masters[index]!.port}`,
          ...known.map(perRequest),
          perRequest(all - known.reduce((sum, count) => sum + count, 0)),
          perRequest(all),
        ];
      }),
    ]),
  ];
}

/** What the owners' counters (the central counters slices are taken from) and the journal cost a request. */
function centralTable(phases: PhaseResult[]): string {
  const figures = (phase: PhaseResult) => {
    const seen = phase.monitor!;
    const perRequest = (pick: (master: Monitored) => number) =>
      fixed(seen.reduce((sum, master) => sum + pick(master), 0) / phase.requests, 3);
    const script = (name: string, field: 'roundTrips' | 'calls' | 'reports') =>
      perRequest((master) => master.scripts[name]?.[field] ?? 0);
    const owners = (kinds: readonly string[]) =>
      perRequest((master) => kinds.reduce((sum, kind) => sum + (master.owners[kind] ?? 0), 0));
    return [
      phase.name,
      `${script('take-slice-2', 'calls')} / ${script('take-slice-2', 'roundTrips')}`,
      script('take-slice-2', 'reports'),
      `${script('return-slice-2', 'calls')} / ${script('return-slice-2', 'roundTrips')}`,
      `${script('take-counters-n', 'calls')} / ${script('take-counters-n', 'roundTrips')}`,
      `${script('add-counters-n', 'calls')} / ${script('add-counters-n', 'roundTrips')}`,
      owners(['key', 'team', 'customer']),
      owners(['res']),
    ];
  };
  return table([
    [
      'per request (calls / round trips)',
      'take-slice',
      'of which reports',
      'return-slice',
      'take-counters (exact)',
      'add-counters',
      "owners' commands",
      'journal commands',
    ],
    ...phases.filter((phase) => phase.monitor).map(figures),
  ]);
}

/** The printed report: `header`, the phases, the central counters, then each phase by master. */
export function formatReport(header: string, phases: PhaseResult[], layout: MasterLayout[]): string {
  const lines = [
    header,
    '',
    summaryTable(phases),
    '',
    'exact adm/req: admissions made on Redis, on the request\'s path (gw_governance_admissions_total{path="exact"});',
    "local: from the ingress's slices. Commands: INFO commandstats, the scripts' inner commands included.",
    ...phases
      .filter((phase) => phase.exactAt.length > 0)
      .map(
        (phase) =>
          `${phase.name}: exact admissions at ${phase.exactAt.map(([seconds, clock, count]) => `${seconds} s (:${clock.toFixed(1).padStart(4, '0')}): ${count}`).join(', ')}`,
      ),
    ...(phases.some((phase) => phase.exactAt.length > 0)
      ? [
          "(:ss.s: the second of the minute by the wall clock; the keys' 1-minute rate limits start a period at :00, and " +
            'their slices are taken anew: a burst just after :00 is that; elsewhere, a slice call that waited past 250 ms ' +
            'or a slice spent before its refill came)',
        ]
      : []),
  ];
  if (phases.some((phase) => phase.monitor)) {
    lines.push(
      '',
      "The central counters, under MONITOR (commands: a script's call and those it ran, by the hash tag of its keys):",
      centralTable(phases),
    );
  }
  for (const phase of phases) {
    lines.push('', `${phase.name}, by master:`, mastersTable(phase, layout));
    if (phase.monitor) lines.push('', `${phase.name}, what MONITOR saw:`, ...monitorTables(phase));
  }
  return lines.join('\n');
}
