// Where a process spent its CPU, from a V8 CPU profile (`node --cpu-prof`): the functions and the files with the most
// self time. `pnpm bench` with BENCH_CPU_PROF=1 prints this for every gw process; standalone:
//   node bench/profile-summary.ts <file.cpuprofile | directory> [...]
// Percentages are of the time the process was busy: (idle) and (program) (time outside JavaScript that V8 cannot
// attribute, mostly waiting in the event loop) are left out of them; (garbage collector) is work and stays in.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The parts of the `.cpuprofile` format (Chrome DevTools protocol, Profiler.Profile) read here. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs between a sample and the one before it (the first: since startTime). */
  timeDeltas: number[];
}

interface SelfTime {
  name: string;
  selfMs: number;
  /** Share of the busy time, 0..1. */
  share: number;
}

export interface ProfileSummary {
  /** The gw process it comes from, recognised by its main script (undefined when none of them is seen). */
  process: string | undefined;
  /** Wall time covered by the samples, and what of it was JavaScript, GC and native work. */
  totalMs: number;
  busyMs: number;
  functions: SelfTime[];
  files: SelfTime[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NOT_WORK = new Set(['(idle)', '(program)', '(root)']);
const MAIN_SCRIPTS: Array<[RegExp, (match: RegExpExecArray) => string]> = [
  [/services\/([a-z-]+)\/src\/main\.ts$/, (match) => match[1]!],
  [/\/src\/embedded\.ts$/, () => 'embedded'],
  [/\/src\/cluster\.ts$/, () => 'launcher'],
];

/** A script URL as a short path: from the repository root, or from the package for anything in node_modules. */
function shortPath(url: string): string {
  if (url === '') return '(V8 builtins and native code)';
  if (!url.startsWith('file://')) return url;
  const path = fileURLToPath(url);
  const inPackage = path.lastIndexOf('/node_modules/');
  if (inPackage >= 0) return path.slice(inPackage + '/node_modules/'.length);
  const fromRoot = relative(ROOT, path);
  return fromRoot.startsWith('..') ? path : fromRoot;
}

function top(times: Map<string, number>, busyMs: number, count: number): SelfTime[] {
  return [...times]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, selfMs]) => ({ name, selfMs, share: busyMs === 0 ? 0 : selfMs / busyMs }));
}

/** What to summarize: how many entries, and only the samples taken within a window of the monotonic clock. */
export interface SummaryOptions {
  functions?: number;
  files?: number;
  /**
   * µs of the monotonic clock (`process.hrtime` / 1000 in any process of the machine: V8 stamps its samples with
   * the same clock), to leave out startup and shutdown.
   */
  window?: { fromUs: number; toUs: number };
}

export function summarizeProfile(profile: CpuProfile, options: SummaryOptions = {}): ProfileSummary {
  const { functions: functionCount = 25, files: fileCount = 15, window } = options;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<number, number>();
  // A sample lasts until the next one; the last one until the end of the profile.
  let at = profile.startTime;
  const times = profile.samples.map((_, index) => (at += profile.timeDeltas[index] ?? 0));
  profile.samples.forEach((id, index) => {
    const time = times[index]!;
    if (window && (time < window.fromUs || time > window.toUs)) return;
    const duration = (times[index + 1] ?? profile.endTime) - time;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, duration));
  });

  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  let totalUs = 0;
  let busyUs = 0;
  let process: string | undefined;
  for (const [id, us] of selfUs) {
    const frame = frames.get(id)!;
    totalUs += us;
    if (NOT_WORK.has(frame.functionName)) continue;
    busyUs += us;
    const file = shortPath(frame.url);
    const name = `${frame.functionName || '(anonymous)'}  ${file}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us / 1000);
    files.set(file, (files.get(file) ?? 0) + us / 1000);
  }
  // The main script is on the stack of every sample taken while the module ran; any node will do to find it.
  for (const { callFrame } of profile.nodes) {
    for (const [pattern, name] of MAIN_SCRIPTS) {
      const match = pattern.exec(callFrame.url);
      if (match) process ??= name(match);
    }
  }
  const busyMs = busyUs / 1000;
  return {
    process,
    totalMs: totalUs / 1000,
    busyMs,
    functions: top(functions, busyMs, functionCount),
    files: top(files, busyMs, fileCount),
  };
}

export function readProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

function rows(title: string, entries: SelfTime[]): string[] {
  return [
    `  ${title}`,
    ...entries.map(
      (entry) =>
        `    ${(entry.share * 100).toFixed(1).padStart(5)}%  ${entry.selfMs.toFixed(0).padStart(7)} ms  ${entry.name}`,
    ),
  ];
}

/** The printed summary of one profile, under `label` (a process name, a file name). */
export function formatSummary(label: string, summary: ProfileSummary): string {
  return [
    `${label}: busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.totalMs / 1000).toFixed(1)} s (percentages of busy time)`,
    ...rows(`top ${summary.functions.length} functions by self time`, summary.functions),
    ...rows(`top ${summary.files.length} files by self time`, summary.files),
  ].join('\n');
}

/** The `.cpuprofile` files of a path: the file itself, or those in the directory and its subdirectories. */
export function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort()
    .map((name) => join(path, name));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const paths = process.argv.slice(2);
  if (paths.length === 0) {
    console.error('usage: node bench/profile-summary.ts <file.cpuprofile | directory> [...]');
    process.exit(2);
  }
  for (const file of paths.flatMap(profileFiles)) {
    const summary = summarizeProfile(readProfile(file));
    console.log(`${formatSummary(`${summary.process ?? 'process'} (${file})`, summary)}\n`);
  }
}
