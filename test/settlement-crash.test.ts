// "Settlement is never lost and never counted twice, including when a process dies mid-request" (issue 4):
// a request is admitted (its reservation recorded), the process serving it is killed with SIGKILL before it
// can settle, and governance's sweeper charges the reservation once: from what the router reported of the
// call when a router could report it (issue 41), at its estimate when none could.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FakeOpenAi,
  freePort,
  type GatewayConfigInput,
  listenerPid,
  pauseForNegativeCheck,
  scaled,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { get } from './support/http.ts';

const ADMIN = { authorization: 'Bearer crash-admin' };
const KEY = 'sk-gw-crash000000000000000000000000000000000000';
// No max_tokens: admission reserves the expected completion (256 tokens), and the worst case would be
// default_max_completion_tokens (4,096).
const BODY = JSON.stringify({ model: 'openai/gpt-crash', messages: [{ role: 'user', content: 'hi' }] });
// The estimate: the prompt's tokens as gw estimates them (3 priming the reply, 4 framing the message, 1 for its
// two characters), plus what admission reserved for the answer (not the 4,096-token worst case: issue 25); at
// $1 per token.
const ESTIMATE_USD = 3 + 4 + 1 + 256;
/** A call the router cut short upstream because its caller was gone: the prompt's estimate. */
const PROMPT_USD = 3 + 4 + 1;

/** `settleDeadlineMs`: when the sweeper takes over a reservation. */
function config(fake: FakeOpenAi, settleDeadlineMs = 800): GatewayConfigInput {
  return {
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
    governance: {
      pricing: { 'gpt-crash': { input: 1_000_000, output: 1_000_000 } },
      settings: {
        settle_deadline_ms: settleDeadlineMs,
        sweep_interval_ms: 100,
        expected_completion_tokens: 256,
        default_max_completion_tokens: 4096,
      },
      virtual_keys: [
        {
          id: 'vk-crash',
          name: 'crash',
          value: KEY,
          provider_configs: [{ provider: 'openai' }],
          budget: { max_limit: 10_000, reset_duration: '1d' },
        },
      ],
    },
  };
}

async function spent(adminUrl: string): Promise<number> {
  const usage = await get(`${adminUrl}/api/governance/virtual-keys/vk-crash/usage`, ADMIN);
  return usage.body.usage[0].entries[0].used;
}

/**
 * Sends the governed request and waits until the (hanging) upstream has it: admitted, not settled. Answers the
 * caller's status (0 when the connection failed).
 */
async function admitHangingRequest(
  url: string,
  fake: FakeOpenAi,
  delayMs = 60_000,
): Promise<{ status: Promise<number> }> {
  fake.enqueue({ delayMs, json: {} });
  const status = fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gw-vk': KEY },
    body: BODY,
  }).then(
    (response) => response.status,
    () => 0,
  );
  await waitFor(() => fake.requests.length === 1);
  return { status };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a process killed mid-request', () => {
  it('embedded: the restarted gateway charges the reservation from its data directory', {
    timeout: scaled(60_000),
  }, async () => {
    const fake = await startFakeOpenAi();
    cleanups.push(() => fake.close());
    const directory = await mkdtemp(join(tmpdir(), 'gw-crash-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const configPath = join(directory, 'gateway.json');
    await writeFile(configPath, JSON.stringify(config(fake)));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const launch = (): ChildProcess => {
      const child = spawn(process.execPath, ['src/embedded.ts'], {
        env: {
          ...process.env,
          PORT: String(port),
          GW_HOST: '127.0.0.1',
          GATEWAY_CONFIG: configPath,
          GATEWAY_DATA_DIR: join(directory, 'data'),
          GATEWAY_ADMIN_TOKEN: 'crash-admin',
          LOG_LEVEL: 'warn',
        },
        stdio: 'ignore',
      });
      cleanups.push(async () => {
        child.kill('SIGKILL');
      });
      return child;
    };

    const first = launch();
    await waitFor(async () => (await get(`${url}/health`).catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 15_000,
    });
    await admitHangingRequest(url, fake);
    // Killed only once the reservation is in the data directory (the store writes it within its save delay).
    await waitFor(async () => {
      const saved = await readFile(join(directory, 'data', 'store.json'), 'utf8').catch(() => '{}');
      return ((JSON.parse(saved) as { reservations?: unknown[] }).reservations ?? []).length > 0;
    });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    launch();
    await waitFor(async () => (await get(`${url}/health`).catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 15_000,
    });
    await waitFor(async () => (await spent(url)) > 0, { timeoutMs: 10_000 });
    expect(await spent(url)).toBe(ESTIMATE_USD);
    // Negative check: a window in which a second charge would have to show.
    await pauseForNegativeCheck(1_000);
    expect(await spent(url)).toBe(ESTIMATE_USD);
  });

  it('cluster: the ingress replica is killed, a governance sweeper charges the call the router cut short its prompt, once', {
    timeout: scaled(60_000),
  }, async () => {
    const fake = await startFakeOpenAi();
    cleanups.push(() => fake.close());
    const gateway = await startCluster({
      config: config(fake),
      adminToken: 'crash-admin',
      replicas: { governance: 2 },
    });
    cleanups.push(() => gateway.close());
    await admitHangingRequest(gateway.url, fake);
    const ingress = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(gateway.launcher.pid)], {
      encoding: 'utf8',
    })
      .split('\n')
      .find((line) => line.includes('services/ingress/src/main.ts'));
    expect(ingress).toBeDefined();
    process.kill(Number(ingress!.trim().split(/\s+/)[0]), 'SIGKILL');
    // The router, its caller gone, cuts the upstream call short and reports it: the sweeper charges the prompt
    // (until then the spend holds what admission reserved).
    await waitFor(async () => (await spent(gateway.adminUrl)) === PROMPT_USD, { timeoutMs: 10_000 });
    // Negative check: a window in which a second charge (the other sweeper) would show.
    await pauseForNegativeCheck(1_000);
    expect(await spent(gateway.adminUrl)).toBe(PROMPT_USD);
    // The launcher restarted the killed replica.
    await waitFor(
      async () => (await get(`${gateway.url}/health`).catch(() => ({ status: 0 }))).status === 200,
      { timeoutMs: 10_000 },
    );
  });

  it('cluster: the router replica freezes mid-call; the sweeper charges what it reported once thawed, not what was reserved', {
    timeout: scaled(60_000),
  }, async () => {
    const fake = await startFakeOpenAi();
    cleanups.push(() => fake.close());
    // The sweeper takes over a few seconds after admission: by then the thawed router has reported the call.
    const gateway = await startCluster({ config: config(fake, 5_000), adminToken: 'crash-admin' });
    cleanups.push(() => gateway.close());
    // The upstream would answer after the thaw: to a router whose caller is gone, which cuts the call short.
    const { status } = await admitHangingRequest(gateway.url, fake, 20_000);
    const router = await listenerPid(gateway.ports.router[0]!);
    process.kill(router, 'SIGSTOP');
    cleanups.push(async () => {
      process.kill(router, 'SIGCONT');
    });
    // The ingress notices the silent replica (its health checks) and fails the call; it leaves it unsettled.
    expect(await status).toBe(503);
    process.kill(router, 'SIGCONT');
    await fake.waitForAborted(0);
    // The sweeper charges the prompt the router sent upstream (before, what admission reserved: 264 tokens).
    await waitFor(async () => (await spent(gateway.adminUrl)) === PROMPT_USD, { timeoutMs: 15_000 });
    // Negative check: a window in which a second charge would show.
    await pauseForNegativeCheck(1_000);
    expect(await spent(gateway.adminUrl)).toBe(PROMPT_USD);
  });
});
