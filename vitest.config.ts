import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { scaled } from './packages/testkit/src/time-scale.ts';

// Every Node process the suite starts (the workers, each cluster's five services, the real clients' CLIs)
// keeps V8's compiled code (TypeScript stripped) on disk: a run starts dozens of clusters whose services load
// the same modules each time, and with the cache warm a cluster starts in about half the time.
process.env['NODE_COMPILE_CACHE'] ??= join(tmpdir(), 'node-compile-cache');

const DRILLS = 'test/drills.test.ts';
const UNIT = ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts'];

export default defineConfig({
  test: {
    // A test's own budget is not stretched here: one whose work takes longer on a busy machine says so itself
    // (`it(name, fn, scaled(60_000))`). Hooks start and stop gateways, clusters and browsers, whose ceilings
    // (startCluster's, waitFor's) stretch with the time scale: theirs does too, or it would end them first. So
    // does expect.poll's, a ceiling of 1 s by default.
    testTimeout: 30_000,
    hookTimeout: scaled(60_000),
    expect: { poll: { timeout: scaled(1_000) } },
    pool: 'forks',
    // Files spend much of their time waiting on sockets, child processes and timers: as many files at once as
    // there are cores (vitest's default, one fewer, is a single file at a time on 2 cores). One more was faster
    // on 2 cores (ten end-to-end files: 93 s with 2 workers, 65–67 s with 3), but starved the processes of
    // clusters starting side by side: Redis commands at start-up missed their 500 ms timeout and timed tests
    // failed, one run in two.
    maxWorkers: availableParallelism(),
    // The drills (scaling and rolling whole clusters under load, with the default deadlines) run last, alone:
    // beside a browser suite or another cluster on two cores, a Redis command or a health check of theirs
    // missed its deadline in two full runs of 2026-12-03 while they passed alone beside two CPU hogs.
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, DRILLS],
          sequence: { groupOrder: 0 },
        },
      },
      // The unit tests beside the code (two hundred files, most done in well under a second) share their workers
      // instead of a fresh process each: the process's start and the import of the same modules again took longer
      // than the tests themselves (on a loaded 2-core machine, 718 s of the two workers' time before 297 s of
      // tests, 2026-12-03). They run beside the end-to-end files, in the same group; none of them sets anything
      // global that it does not restore. The end-to-end files under test/ keep a process each: they start
      // gateways in it, with their environment variables and handles.
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'drills', include: [DRILLS], sequence: { groupOrder: 1 } } },
    ],
  },
});
