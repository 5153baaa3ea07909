// CPU time per process, read from /proc (Linux only): which process is which service of a cluster, and how
// much CPU each one used between two snapshots. A loaded machine slows every wall-clock figure; CPU per request
// moves much less, so it is the figure that compares builds and sizes a cluster (docs/kubernetes.md "Sizing").
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** /proc/<pid>/stat is there to read (Linux); elsewhere every CPU figure is left out. */
export const procAvailable = process.platform === 'linux' && existsSync('/proc/self/stat');

/** The clock ticks of /proc/<pid>/stat are USER_HZ, 100 per second on every Linux Node runs on. */
const MS_PER_TICK = 10;

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time (user + system, all threads, threads that ended included) of a process in ms; undefined when gone. */
function processCpuMs(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
}

/** The command line of a process, its arguments joined by spaces ('' when it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** The direct children of a process: /proc/<pid>/task/<tid>/children, or every process's parent when absent. */
function children(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      // A kernel without CONFIG_PROC_CHILDREN: scan every process for its parent (field 4) instead.
      return readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .map(Number)
        .filter((candidate) => Number(statFields(candidate)?.[1]) === pid);
    }
    for (const child of text.trim().split(/\s+/)) if (child) found.push(Number(child));
  }
  return found;
}

/** A process and all its descendants (what a gateway started, an MCP server say, is its cost too). */
export function processTree(pid: number): number[] {
  return [pid, ...children(pid).flatMap(processTree)];
}

/** A named share of the CPU: the processes (and their descendants) counted under that name. */
export interface ProcessGroup {
  name: string;
  pids: number[];
}

const SERVICE_SCRIPT = /services\/([a-z-]+)\/src\/main\.ts/;

/**
 * The processes of a `src/cluster.ts` launcher: each child is a service, named by the script on its command line
 * (`services/<name>/src/main.ts`; replicas of one service are counted together, with anything they started);
 * the launcher itself is `launcher`. A child that runs no service script is counted as `other`.
 */
export function clusterProcesses(launcherPid: number): ProcessGroup[] {
  const groups = new Map<string, number[]>([['launcher', [launcherPid]]]);
  for (const child of children(launcherPid)) {
    const name = SERVICE_SCRIPT.exec(commandLine(child))?.[1] ?? 'other';
    groups.set(name, [...(groups.get(name) ?? []), ...processTree(child)]);
  }
  return [...groups].map(([name, pids]) => ({ name, pids }));
}

/** The CPU time of every group, ms (undefined for a group one of whose processes is gone). */
export type CpuSnapshot = Map<string, number | undefined>;

export function cpuSnapshot(groups: ProcessGroup[]): CpuSnapshot {
  return new Map(
    groups.map((group) => {
      let sum: number | undefined = 0;
      for (const pid of group.pids) {
        const ms = processCpuMs(pid);
        sum = ms === undefined || sum === undefined ? undefined : sum + ms;
      }
      return [group.name, sum];
    }),
  );
}

/**
 * Where a process's CPU goes, by thread: `main` (the event loop: what gw's JavaScript and Node's I/O cost),
 * `v8` (V8's helper threads: concurrent garbage collection and compilation) and `threads` (everything else:
 * worker threads such as the request-log SQLite thread or the span export thread, libuv's pool). Only threads
 * alive at the snapshot are counted, so a split is read between two snapshots of threads that lived through
 * both (a gateway's threads do).
 */
export type ThreadKind = 'main' | 'v8' | 'threads';
export const THREAD_KINDS: readonly ThreadKind[] = ['main', 'v8', 'threads'];

function threadKind(pid: number, tid: number, comm: string): ThreadKind {
  if (tid === pid || comm === 'MainThread') return 'main';
  return comm.startsWith('V8') ? 'v8' : 'threads';
}

/** CPU ms of each group's live threads, by kind (a group whose processes are gone counts what is left). */
export type ThreadSnapshot = Map<string, Record<ThreadKind, number>>;

export function threadSnapshot(groups: ProcessGroup[]): ThreadSnapshot {
  return new Map(
    groups.map((group) => {
      const kinds: Record<ThreadKind, number> = { main: 0, v8: 0, threads: 0 };
      for (const pid of group.pids) {
        let tids: string[];
        try {
          tids = readdirSync(`/proc/${pid}/task`);
        } catch {
          continue;
        }
        for (const tid of tids) {
          let stat: string;
          try {
            stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
          } catch {
            continue;
          }
          const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          kinds[threadKind(pid, Number(tid), comm)] +=
            (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
        }
      }
      return [group.name, kinds];
    }),
  );
}

/** µs of CPU per request of each group's threads by kind, between two snapshots. */
export function threadsPerRequest(
  before: ThreadSnapshot,
  after: ThreadSnapshot,
  requests: number,
): Record<string, Record<ThreadKind, number>> {
  const perRequest = (from: number, to: number) => Math.round(((to - from) * 1000) / Math.max(1, requests));
  return Object.fromEntries(
    [...before].flatMap(([name, from]) => {
      const to = after.get(name);
      if (!to || requests === 0) return [];
      return [
        [
          name,
          {
            main: perRequest(from.main, to.main),
            v8: perRequest(from.v8, to.v8),
            threads: perRequest(from.threads, to.threads),
          },
        ],
      ];
    }),
  );
}

/** µs of CPU per request of each group between two snapshots (undefined where a process went away). */
export function cpuPerRequest(
  before: CpuSnapshot,
  after: CpuSnapshot,
  requests: number,
): Record<string, number | undefined> {
  return Object.fromEntries(
    [...before].map(([name, from]) => {
      const to = after.get(name);
      return [
        name,
        from === undefined || to === undefined || requests === 0
          ? undefined
          : Math.round(((to - from) * 1000) / requests),
      ];
    }),
  );
}
