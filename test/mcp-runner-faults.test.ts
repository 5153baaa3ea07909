// A killed or frozen MCP runner costs its in-flight tool calls a few seconds, not a timeout: its job locks
// expire (GW_MCP_LOCK_DURATION_MS, 4 s) and the next stalled check (GW_MCP_STALLED_INTERVAL_MS, 2 s) hands
// them to the other runner, which runs them again (at-least-once: docs/mcp.md) and answers the caller.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FIXTURE_MCP_SERVER,
  type LaunchedCluster,
  scaled,
  startCluster,
  stdioServer,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';

/** The parent process of a process (Linux: the fourth field of /proc/<pid>/stat). */
async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('a runner that dies or freezes mid-call (cluster: 2 runners)', () => {
  let cluster: LaunchedCluster;
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gw-runner-faults-'));
    cluster = await startCluster({
      replicas: { 'mcp-runner': 2 },
      config: {
        mcp: {
          clients: [
            {
              name: 'fixture',
              connection_type: 'stdio',
              stdio_config: stdioServer(FIXTURE_MCP_SERVER),
              allow_by_default: true,
            },
          ],
          tool_timeout_ms: 30_000,
          queue_timeout_ms: 30_000,
        },
      },
    });
    // Both runners connected to the client before calls start.
    await waitFor(
      async () => {
        const answer = await post(`${cluster.url}/v1/mcp/tool/execute`, {
          type: 'function',
          id: 'warm',
          function: { name: 'fixture-ok', arguments: '{}' },
        });
        return answer.status === 200;
      },
      { timeoutMs: 30_000, what: 'a runner serving the fixture' },
    );
  }, scaled(90_000));
  afterAll(async () => {
    await cluster?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it.each(['SIGKILL', 'SIGSTOP'] as const)(
    'a call whose runner gets %s is answered by the other runner within seconds',
    { timeout: scaled(60_000) },
    async (signal) => {
      const startedFile = join(directory, `started-${signal}`);
      const call = post(
        `${cluster.url}/v1/mcp/tool/execute`,
        {
          type: 'function',
          id: `call-${signal}`,
          function: { name: 'fixture-sleep', arguments: JSON.stringify({ ms: 1_000, startedFile }) },
        },
        { signal: AbortSignal.timeout(scaled(40_000)) },
      );
      // The MCP server that started the call is a child of the runner holding the job.
      const serverPid = await waitFor(
        async () => Number(/started (\d+)/.exec(await readFile(startedFile, 'utf8'))?.[1]) || undefined,
        { timeoutMs: 10_000, what: 'the call to start' },
      );
      const runner = await parentOf(serverPid);
      const killedAt = Date.now();
      process.kill(runner, signal);
      try {
        const answer = await call;
        const seconds = (Date.now() - killedAt) / 1000;
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body.content).toBe('slept 1000');
        expect(answer.body.tool_call_id).toBe(`call-${signal}`);
        // Taken over, run again from the start (1 s), answered: well under the 30 s timeouts.
        expect(seconds).toBeLessThan(20);
        const starts = (await readFile(startedFile, 'utf8')).trim().split('\n');
        expect(starts.length).toBe(2);
        console.info(
          `runner ${signal}: answered ${seconds.toFixed(1)} s after the signal (the tool ran twice)`,
        );
      } finally {
        if (signal === 'SIGSTOP') process.kill(runner, 'SIGCONT');
      }
    },
  );
});
