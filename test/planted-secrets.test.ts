// Fifteen secrets planted in a cluster (provider keys of five providers, Bedrock credentials, a custom auth
// header, gw's own tokens, a virtual key, MCP URL credentials and a stdio server's variable), an upstream and
// an MCP server that echo everything they receive, and debug logs: no answer, admin view or log line carries
// any of them (issue 17, items 8 and 10).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LaunchedCluster, scaled, startCluster, waitFor } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const PLANTED = {
  openaiKey: 'sk-openai-planted-0001aaaaaaaaaaaa',
  anthropicKey: 'sk-ant-planted-0002bbbbbbbbbbbbbb',
  customHeader: 'hdr-planted-0003cccccccccc',
  geminiKey: 'gemini-planted-0004dddddddd',
  cohereKey: 'cohere-planted-0005eeeeeeee',
  bedrockAccessKey: 'AKIAPLANTED000000006',
  bedrockSecretKey: 'bedrock-secret-planted-0007ffff',
  virtualKey: 'sk-gw-planted0008gggggggggggggggggggggggggg',
  adminToken: 'admin-planted-0009hhhhhhhh',
  clusterToken: 'cluster-planted-0010iiiiiiii',
  metricsToken: 'metrics-planted-0011jjjjjjjj',
  mcpPassword: 'mcppass-planted-0012kkkk',
  mcpQuery: 'mcpquery-planted-0013llll',
  mcpEnv: 'mcpenv-planted-0014mmmm',
  adminSetKey: 'sk-adminset-planted-0015nnnnnnnn',
};

describe('planted secrets (cluster)', () => {
  let echo: Server;
  let echoUrl: string;
  let cluster: LaunchedCluster;
  const seen: string[] = [];

  beforeAll(async () => {
    // Every upstream and MCP server here answers 401 with everything it was sent: URL, headers and body.
    echo = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        response.writeHead(401, {
          'content-type': 'application/json',
          'x-echo-auth': String(request.headers.authorization),
        });
        response.end(
          JSON.stringify({
            error: {
              message: `denied ${request.method} ${request.url} ${JSON.stringify(request.headers)} ${body}`,
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    const network = { base_url: echoUrl, max_retries: 0 };
    cluster = await startCluster({
      adminToken: PLANTED.adminToken,
      env: {
        LOG_LEVEL: 'debug',
        GW_CLUSTER_TOKEN: PLANTED.clusterToken,
        GW_METRICS_TOKEN: PLANTED.metricsToken,
        PLANTED_MCP_ENV: PLANTED.mcpEnv,
      },
      config: {
        client: { enforce_virtual_keys: true },
        providers: {
          openai: {
            keys: [{ value: PLANTED.openaiKey }],
            network_config: { ...network, extra_headers: { 'x-upstream-auth': PLANTED.customHeader } },
          },
          anthropic: { keys: [{ value: PLANTED.anthropicKey }], network_config: network },
          gemini: { keys: [{ value: PLANTED.geminiKey }], network_config: network },
          cohere: { keys: [{ value: PLANTED.cohereKey }], network_config: network },
          bedrock: {
            keys: [
              {
                config: {
                  access_key: PLANTED.bedrockAccessKey,
                  secret_key: PLANTED.bedrockSecretKey,
                  region: 'us-east-1',
                },
              },
            ],
            network_config: network,
          },
        },
        governance: {
          virtual_keys: [
            {
              id: 'vk-planted',
              name: 'planted',
              value: PLANTED.virtualKey,
              provider_configs: ['openai', 'anthropic', 'gemini', 'cohere', 'bedrock'].map((provider) => ({
                provider,
                allowed_models: ['*'],
              })),
            },
          ],
        },
        mcp: {
          clients: [
            {
              name: 'echoing',
              connection_type: 'http',
              connection_string: `http://gw:${PLANTED.mcpPassword}@127.0.0.1:${new URL(echoUrl).port}/mcp?api_key=${PLANTED.mcpQuery}`,
            },
            {
              name: 'printing',
              connection_type: 'stdio',
              stdio_config: {
                command: process.execPath,
                args: ['-e', 'console.error("env " + process.env.PLANTED_MCP_ENV); process.exit(1)'],
                envs: ['PLANTED_MCP_ENV'],
              },
            },
          ],
        },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await cluster?.close();
    await new Promise((resolve) => echo?.close(resolve));
  });

  const admin = { authorization: `Bearer ${PLANTED.adminToken}` };
  const record = (label: string, value: unknown) => {
    seen.push(`${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  };

  it('no answer, admin view or log line carries a planted secret', { timeout: scaled(60_000) }, async () => {
    const caller = { 'x-gw-vk': PLANTED.virtualKey };
    // Completions through every provider: each upstream answers 401 quoting what it received.
    for (const model of [
      'openai/gpt-4o-mini',
      'anthropic/claude-3-5-haiku-latest',
      'gemini/gemini-2.0-flash',
      'cohere/command-r',
      'bedrock/anthropic.claude-3-haiku-20240307-v1:0',
    ]) {
      const answer = await post(
        `${cluster.url}/v1/chat/completions`,
        { model, messages: [{ role: 'user', content: 'hi' }] },
        { headers: caller },
      );
      expect(answer.status).toBeGreaterThanOrEqual(400);
      record(`chat ${model}`, { status: answer.status, headers: [...answer.headers], body: answer.body });
    }
    // Pass-through error answers, relayed with their bytes.
    for (const provider of ['openai', 'anthropic', 'gemini']) {
      const answer = await fetch(`${cluster.url}/v1/models`, {
        headers: { ...caller, 'x-gw-provider': provider, 'accept-encoding': 'identity' },
      });
      record(`models ${provider}`, {
        status: answer.status,
        headers: [...answer.headers],
        body: await answer.text(),
      });
    }
    // A key added through the admin API, then used.
    const added = await call(
      'PUT',
      `${cluster.adminUrl}/api/providers/openai`,
      {
        keys: [{ value: PLANTED.adminSetKey }],
        network_config: {
          base_url: echoUrl,
          max_retries: 0,
          extra_headers: { 'x-upstream-auth': PLANTED.customHeader },
        },
      },
      admin,
    );
    record('admin put provider', added.body);
    await waitFor(async () => {
      const answer = await post(
        `${cluster.url}/v1/chat/completions`,
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { headers: caller },
      );
      record('chat after admin key', answer.body);
      return JSON.stringify(answer.body).includes('[redacted]');
    });
    // MCP clients fail against the echoing server and the printing command; their reports are read back.
    await waitFor(
      async () => {
        const clients = await get(`${cluster.adminUrl}/api/mcp/clients`, admin);
        return (
          Array.isArray(clients.body) &&
          clients.body.length === 2 &&
          clients.body.every((client: { state: string }) => client.state === 'error') &&
          clients
        );
      },
      { timeoutMs: 15_000, what: 'both MCP clients in error' },
    );
    for (const path of [
      '/api/providers',
      '/api/providers/openai',
      '/api/providers/bedrock',
      '/api/mcp/clients',
      '/api/mcp/client/echoing',
      '/api/mcp/client/printing',
      '/api/governance/virtual-keys',
      '/api/governance/virtual-keys/vk-planted',
      '/api/keys',
    ]) {
      record(`admin ${path}`, (await get(`${cluster.adminUrl}${path}`, admin)).body);
    }
    const metrics = await fetch(`${cluster.url}/metrics`, {
      headers: { authorization: `Bearer ${PLANTED.metricsToken}` },
    });
    expect(metrics.status).toBe(200);
    record('metrics', await metrics.text());
    // The logs once the processes have written what these calls logged: no new line for 100 ms.
    let lastOutput: string | undefined;
    const logs = await waitFor(
      () => {
        const output = cluster.output();
        const quiet = output === lastOutput;
        lastOutput = output;
        return quiet && output;
      },
      { intervalMs: 100, what: 'the cluster logs to settle' },
    );
    record('logs', logs);

    const everything = seen.join('\n');
    // Each leak named with where it was found, so a failure shows the text around it.
    const found = Object.entries(PLANTED).flatMap(([name, secret]) =>
      seen
        .filter((text) => text.includes(secret))
        .map(
          (text) =>
            `${name} in ${text.slice(0, 40)}…${text.slice(text.indexOf(secret) - 120, text.indexOf(secret))}`,
        ),
    );
    console.info(
      `planted secrets: ${Object.keys(PLANTED).length}, texts checked: ${seen.length} ` +
        `(${everything.length} characters, ${cluster.output().split('\n').length} log lines); found: ${found.length}`,
    );
    // The echo proves the secrets went where they should (upstream) and came back to be taken out.
    expect(everything).toContain('[redacted]');
    expect(found).toEqual([]);
  });
});
