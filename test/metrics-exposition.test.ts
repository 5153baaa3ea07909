// The metrics operators chart (issue 14 item 7), checked with Prometheus's own linter (`promtool check
// metrics`, Debian's prometheus package, installed by .ci/run): every exposition of every process is valid,
// and carries tokens and cost by provider and model, and the latency of each gRPC hop.
import { spawnSync } from 'node:child_process';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedCluster,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';

const KEY = 'sk-gw-metrics000000000000000000000000000000000000';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config })],
  // Info lines carry each service's metrics port.
  ['cluster', (config: GatewayConfigInput) => startCluster({ config, env: { LOG_LEVEL: 'info' } })],
] as const;

/** promtool's verdict on an exposition: its exit code and what it printed. */
function promtool(exposition: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (run.error) throw new Error(`promtool is needed (Debian's prometheus package): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The /metrics ports of a cluster's router, governance and admin, from their start-up lines. */
function metricsPorts(cluster: LaunchedCluster): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const line of cluster.output().split('\n')) {
    const match = /"metricsPort":(\d+).*"msg":"([\w-]+) (?:listening|working)"/.exec(line);
    if (match) ports[match[2]!] = Number(match[1]);
  }
  return ports;
}

describe.each(MODES)('metrics exposition (%s)', (mode, start) => {
  let openai: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    gateway = await start({
      providers: { openai: { keys: [{ value: 'sk-openai' }], network_config: { base_url: openai.url } } },
      governance: {
        virtual_keys: [
          {
            id: 'vk-metrics',
            name: 'metrics',
            value: KEY,
            provider_configs: [{ provider: 'openai' }],
            budgets: [{ max_limit: 100, reset_duration: '1d' }],
          },
        ],
      },
    });
    for (const headers of [{}, { 'x-gw-vk': KEY }] as Array<Record<string, string>>) {
      const answer = await post(
        `${gateway.url}/v1/chat/completions`,
        { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
        { headers },
      );
      expect(answer.status).toBe(200);
    }
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await openai?.close();
  });

  it('every process exposes metrics promtool accepts, with tokens, cost and hop latency', async () => {
    // Settles run after the answer: the front's exposition is read once it counts the tokens and a charge.
    const settled = await waitFor(
      async () => {
        const text = await (await fetch(`${gateway.url}/metrics`)).text();
        return (
          text.includes('gw_cost_usd_total{') &&
          /gw_tokens_total\{[^}]*kind="prompt"[^}]*\} 22/.test(text) &&
          text
        );
      },
      { what: 'the charges counted' },
    );
    const expositions: Record<string, string> = { [mode === 'embedded' ? 'gateway' : 'ingress']: settled };
    if (mode === 'cluster') {
      for (const [service, port] of Object.entries(metricsPorts(gateway as LaunchedCluster))) {
        expositions[service] = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      }
      expect(Object.keys(expositions).sort()).toEqual([
        'admin',
        'governance',
        'ingress',
        'mcp-runner',
        'router',
      ]);
    }
    for (const [service, text] of Object.entries(expositions)) {
      const verdict = promtool(text);
      expect(verdict, `${service}: ${verdict.output}`).toEqual({ status: 0, output: '' });
    }
    const front = expositions[mode === 'embedded' ? 'gateway' : 'ingress']!;
    expect(front).toMatch(/gw_tokens_total\{provider="openai",model="gpt-4o",kind="prompt"[^}]*\} 22/);
    // Requests are admitted and settled where they arrive (in a cluster, the ingress: no governance hop).
    expect(front).toMatch(/gw_cost_usd_total\{provider="openai",model="gpt-4o"[^}]*\} 0\.0000\d+/);
    if (mode === 'cluster') {
      expect(front).toMatch(/gw_grpc_client_duration_seconds_count\{[^}]*method="router\.Complete"[^}]*\} 2/);
      expect(front).not.toMatch(/method="governance\.Authorize"/);
      expect(expositions['governance']).not.toMatch(/gw_cost_usd_total\{/);
    }
  });
});
