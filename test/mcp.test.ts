// MCP end to end, in both modes (issue 5): clients added through the admin API over stdio, Streamable HTTP
// and SSE (real servers from npm, loopback only), listing with tools and state, tool execution, the three
// filtering levels, required headers, the queue bound, deletion, tool injection and the agent loop in chat,
// and (cluster) a runner killed with SIGKILL mid-call whose job another runner finishes.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chatCompletion,
  type FakeOpenAi,
  FIXTURE_MCP_SERVER,
  type GatewayConfigInput,
  type LaunchedCluster,
  type LaunchedGateway,
  MCP_SERVER_ENTRIES,
  type RunningMcpServer,
  scaled,
  startCluster,
  startEmbedded,
  startEverythingServer,
  startFakeOpenAi,
  stdioServer,
  untilClockPasses,
  waitFor,
} from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectGatewayError, get, type Json, post } from './support/http.ts';

const ADMIN_TOKEN = 'mcp-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
/** Every LLM and MCP request must carry it (client.required_headers). */
const TEAM = { 'x-team': 'core' };
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Requests the ingress at `url` is serving (gw_inflight_requests; the /metrics request counts itself). */
async function inflightRequests(url: string): Promise<number> {
  const metrics = await (
    await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(scaled(5_000)) })
  ).text();
  return Number(/^gw_inflight_requests(?:\{[^}]*\})? (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

function config(fake: FakeOpenAi): GatewayConfigInput {
  return {
    client: { required_headers: ['x-team'] },
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
    mcp: {
      clients: [
        {
          name: 'everything',
          connection_type: 'stdio',
          stdio_config: stdioServer(MCP_SERVER_ENTRIES.everything, ['stdio']),
          allow_by_default: true,
          inject_into_chat: true,
          tools_to_auto_execute: ['echo'],
        },
      ],
      worker_concurrency: 2,
      max_queued: 1,
      // Past the slow calls of the queue bound's case (stretched as they are).
      tool_timeout_ms: scaled(8_000),
      queue_timeout_ms: scaled(15_000),
    },
  };
}

/** Runners take a dead runner's job over within about 3 s (lock 2 s, stall check every 1 s). */
const CLUSTER_ENV = { GW_MCP_LOCK_DURATION_MS: '2000', GW_MCP_STALLED_INTERVAL_MS: '1000' };

const modes = [
  [
    'embedded',
    (configuration: GatewayConfigInput, env: Record<string, string>) =>
      startEmbedded({ config: configuration, adminToken: ADMIN_TOKEN, env }),
    2,
  ],
  [
    'cluster',
    (configuration: GatewayConfigInput, env: Record<string, string>) =>
      startCluster({
        config: configuration,
        adminToken: ADMIN_TOKEN,
        replicas: { 'mcp-runner': 2 },
        env: { ...CLUSTER_ENV, ...env },
      }),
    4,
  ],
] as const;

let remote: RunningMcpServer;
let legacy: RunningMcpServer;
beforeAll(async () => {
  [remote, legacy] = await Promise.all([
    startEverythingServer('streamableHttp'),
    startEverythingServer('sse'),
  ]);
});
afterAll(async () => {
  await Promise.all([remote?.close(), legacy?.close()]);
});

describe.each(modes)('MCP (%s)', (mode, start, runSlots) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let directory: string;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    directory = await mkdtemp(join(tmpdir(), 'gw-mcp-'));
    gateway = await start(config(fake), { MEMORY_FILE_PATH: join(directory, 'memory.jsonl') });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    await rm(directory, { recursive: true, force: true });
  });

  const execute = (name: string, args: Json = {}, headers: Record<string, string> = TEAM, id = 'call-1') =>
    post(
      `${gateway.url}/v1/mcp/tool/execute`,
      { type: 'function', id, function: { name, arguments: JSON.stringify(args) } },
      { headers },
    );
  const clients = async () => (await get(`${gateway.adminUrl}/api/mcp/clients`, ADMIN)).body as Json[];
  const addClient = async (body: Json) => {
    const added = await post(`${gateway.adminUrl}/api/mcp/client`, body, { headers: ADMIN });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    return added.body;
  };

  it('lists the client of the config file as connected, with its tools', async () => {
    const everything = await waitFor(
      async () =>
        (await clients()).find((client) => client.name === 'everything' && client.state === 'connected'),
      { timeoutMs: 15_000 },
    );
    expect(everything.tools).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']),
    );
    expect(everything.config).toMatchObject({ connection_type: 'stdio', allow_by_default: true });
  });

  it('adds stdio, Streamable HTTP and SSE clients through admin and lists them with tools and state', async () => {
    const bodies = [
      {
        name: 'fixture',
        connection_type: 'stdio',
        stdio_config: stdioServer(FIXTURE_MCP_SERVER),
        inject_into_chat: true,
      },
      {
        name: 'memory',
        connection_type: 'stdio',
        stdio_config: stdioServer(MCP_SERVER_ENTRIES.memory, [], ['MEMORY_FILE_PATH']),
      },
      {
        name: 'files',
        connection_type: 'stdio',
        stdio_config: stdioServer(MCP_SERVER_ENTRIES.filesystem, [directory]),
      },
      { name: 'remote', connection_type: 'http', connection_string: remote.url },
      { name: 'legacy', connection_type: 'sse', connection_string: legacy.url },
    ];
    const added = await Promise.all(bodies.map(addClient));
    for (const [index, body] of added.entries()) {
      // Add waits (up to 5 s) for a runner's report: normally `connected` by then.
      expect(body).toMatchObject({ status: 'success', client: { name: bodies[index]!.name } });
      expect(['connected', 'connecting']).toContain(body.client.state);
    }
    const again = await post(`${gateway.adminUrl}/api/mcp/client`, bodies[0], { headers: ADMIN });
    expect(again.status).toBe(409);
    const listed = await waitFor(
      async () => {
        const all = await clients();
        return all.length === 6 && all.every((client) => client.state === 'connected') && all;
      },
      { timeoutMs: 15_000 },
    );
    const byName = Object.fromEntries(listed.map((client: Json) => [client.name, client]));
    expect(byName.memory.tools).toContain('read_graph');
    expect(byName.files.tools).toContain('list_directory');
    expect(byName.remote.tools).toContain('echo');
    expect(byName.legacy.tools).toContain('echo');
    expect(byName.fixture.tools).toEqual(expect.arrayContaining(['ok', 'fail', 'sleep']));
    expect(byName.remote.runners.length).toBe(mode === 'cluster' ? 2 : 1);
  });

  it('executes tools on every transport and echoes the tool_call_id', async () => {
    const answer = await execute('everything-echo', { message: 'hi' }, TEAM, 'call-42');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ role: 'tool', content: 'Echo: hi', tool_call_id: 'call-42' });
    expect((await execute('remote-echo', { message: 'over http' })).body.content).toBe('Echo: over http');
    expect((await execute('legacy-echo', { message: 'over sse' })).body.content).toBe('Echo: over sse');
    expect((await execute('memory-read_graph')).body.content).toContain('entities');
    expect((await execute('files-list_directory', { path: directory })).status).toBe(200);
    // A bare server name works when one client offers it.
    expect((await execute('read_graph')).status).toBe(200);
  });

  it("answers a tool's own failure as the tool message, with a marker header", async () => {
    const answer = await execute('fixture-fail');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ role: 'tool', content: 'it failed on purpose', tool_call_id: 'call-1' });
    expect(answer.headers.get('x-gw-mcp-tool-error')).toBe('true');
    expect((await execute('fixture-ok')).headers.get('x-gw-mcp-tool-error')).toBeNull();
  });

  it('answers 400 for unknown tools, bad arguments and a missing required header', async () => {
    expectGatewayError(await execute('nobody-nothing'), { status: 400, type: 'mcp_tool_not_found' });
    const bad = await post(
      `${gateway.url}/v1/mcp/tool/execute`,
      { type: 'function', id: 'c', function: { name: 'everything-echo', arguments: 'not json' } },
      { headers: TEAM },
    );
    expectGatewayError(bad, { status: 400, type: 'invalid_request', message: 'function.arguments' });
    expectGatewayError(await execute('everything-echo', { message: 'x' }, {}), {
      status: 400,
      type: 'missing_required_header',
    });
  });

  it('filters by client config, request header and virtual key policy, and enforces it at execution', async () => {
    const created = await post(
      `${gateway.adminUrl}/api/governance/virtual-keys`,
      {
        name: 'mcp-key',
        provider_configs: [{ provider: 'openai' }],
        mcp_tools: [
          { client: 'memory', tools: ['read_graph'] },
          { client: 'fixture', tools: ['*'] },
        ],
      },
      { headers: ADMIN },
    );
    expect(created.status).toBe(201);
    const key = { ...TEAM, 'x-gw-vk': created.body.value };
    // Key policy: selected tools, `*`, none; allow-by-default clients need no entry.
    expect((await execute('memory-read_graph', {}, key)).status).toBe(200);
    expectGatewayError(await execute('memory-create_entities', { entities: [] }, key), {
      status: 403,
      type: 'mcp_tool_not_allowed',
    });
    expect((await execute('everything-echo', { message: 'x' }, key)).status).toBe(200);
    expect((await execute('fixture-pid', {}, key)).status).toBe(200);
    expectGatewayError(await execute('files-list_directory', { path: directory }, key), {
      status: 403,
      type: 'mcp_tool_not_allowed',
    });
    // Without a key every client is available.
    expect((await execute('files-list_directory', { path: directory })).status).toBe(200);
    // The header narrows; its entries the key does not allow (files-*) are dropped.
    const narrowed = { ...key, 'x-gw-mcp-include-tools': 'fixture-ok, files-*' };
    expect((await execute('fixture-ok', {}, narrowed)).status).toBe(200);
    expectGatewayError(await execute('fixture-pid', {}, narrowed), {
      status: 403,
      type: 'mcp_tool_not_allowed',
    });
    expectGatewayError(await execute('files-list_directory', { path: directory }, narrowed), {
      status: 403,
      type: 'mcp_tool_not_allowed',
    });
    expectGatewayError(await execute('everything-echo', { message: 'x' }, narrowed), {
      status: 403,
      type: 'mcp_tool_not_allowed',
    });
    // Client config: tools_to_skip, edited through admin.
    const edited = await call(
      'PUT',
      `${gateway.adminUrl}/api/mcp/client/fixture`,
      { tools_to_skip: ['pid'] },
      ADMIN,
    );
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      status: 'success',
      client: { name: 'fixture', config: { tools_to_skip: ['pid'] } },
    });
    await waitFor(async () => (await execute('fixture-pid')).status === 403);
    expectGatewayError(await execute('fixture-pid', {}, key), { status: 403, type: 'mcp_tool_not_allowed' });
    await call('PUT', `${gateway.adminUrl}/api/mcp/client/fixture`, { tools_to_skip: null }, ADMIN);
    await waitFor(async () => (await execute('fixture-pid')).status === 200);
  });

  it('injects MCP tools into chat requests without overriding the caller’s own', async () => {
    const before = fake.requests.length;
    const own = {
      type: 'function',
      function: { name: 'everything-get-sum', description: 'mine', parameters: { type: 'object' } },
    };
    const answer = await post(
      `${gateway.url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools: [own] },
      { headers: { ...TEAM, 'x-gw-mcp-include-tools': 'everything-*, fixture-ok' } },
    );
    expect(answer.status).toBe(200);
    const sent = fake.requests[before]!.body as Json;
    const names = sent.tools.map((tool: Json) => tool.function.name);
    expect(names).toContain('everything-echo');
    expect(names).toContain('fixture-ok');
    expect(names).not.toContain('fixture-pid');
    expect(names.filter((name: string) => name === 'everything-get-sum')).toHaveLength(1);
    expect(sent.tools[0]).toEqual(own);
    const echo = sent.tools.find((tool: Json) => tool.function.name === 'everything-echo');
    expect(echo.function.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
    });
  });

  it('runs auto-executed tools in an agent loop and returns the final answer', async () => {
    const before = fake.requests.length;
    fake.enqueue(
      {
        json: chatCompletion({
          content: null,
          toolCalls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'everything-echo', arguments: '{"message":"loop"}' },
            },
          ],
        }),
      },
      { json: chatCompletion({ content: 'the tool said Echo: loop' }) },
    );
    const answer = await post(
      `${gateway.url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'echo loop' }] },
      { headers: TEAM },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.choices[0].message.content).toBe('the tool said Echo: loop');
    expect(answer.body.usage.total_tokens).toBe(36);
    expect(fake.requests.length - before).toBe(2);
    const second = fake.requests[before + 1]!.body as Json;
    expect(second.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'call_a', function: { name: 'everything-echo' } }],
    });
    expect(second.messages.at(-1)).toEqual({ role: 'tool', content: 'Echo: loop', tool_call_id: 'call_a' });
  });

  it('returns tool calls of tools not marked for automatic execution to the caller', async () => {
    const before = fake.requests.length;
    const toolCalls = [{ id: 'call_b', type: 'function', function: { name: 'fixture-ok', arguments: '{}' } }];
    fake.enqueue({ json: chatCompletion({ content: null, toolCalls }) });
    const answer = await post(
      `${gateway.url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'ok?' }] },
      { headers: TEAM },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0].finish_reason).toBe('tool_calls');
    expect(answer.body.choices[0].message.tool_calls[0]).toMatchObject({
      id: 'call_b',
      function: { name: 'fixture-ok' },
    });
    expect(fake.requests.length - before).toBe(1);
  });

  it('answers 429 queue_full past the bound of waiting calls', { timeout: scaled(60_000) }, async () => {
    // Every run slot busy, then one call waiting: the next one is over the bound (max_queued 1).
    const startedFile = join(directory, 'sleep-started');
    // They hold them long enough for the steps below, on a busy machine too.
    const slow = Array.from({ length: runSlots }, (_, index) =>
      execute('fixture-sleep', { ms: scaled(2_500), startedFile }, TEAM, `slow-${index}`),
    );
    // The slow calls hold every run slot once the fixture has started each of them.
    // Runners usually start the calls within 100 ms. In a cluster a burst wakes one runner's worker; the other
    // takes up the rest after at most its drain delay (0.5 s: tool-worker.ts says why; at BullMQ's default 5 s
    // this wait was seen to time out). The margin is for a loaded CI machine.
    await waitFor(async () => (await readFile(startedFile, 'utf8')).split('\n').length > runSlots, {
      timeoutMs: 30_000,
      what: 'the slow calls to hold every run slot',
    });
    const waiting = execute('fixture-sleep', { ms: 10 }, TEAM, 'waiting');
    // The waiting call is being served: the slow ones, it, and the /metrics request reading the gauge.
    await waitFor(async () => (await inflightRequests(gateway.url)) >= runSlots + 2, {
      what: 'the waiting call to reach the gateway',
    });
    if (mode === 'cluster') {
      // In the queue (BullMQ's wait list): reaching the gateway is not being queued yet on a busy machine.
      const redis = new Redis(REDIS_URL);
      try {
        const bull = `${(gateway as LaunchedCluster).prefix}{bull}:gw-mcp-tools`;
        await waitFor(async () => (await redis.llen(`${bull}:wait`)) >= 1, {
          what: 'the waiting call in the queue',
        });
      } finally {
        redis.disconnect();
      }
    }
    // The cluster checks the bound against a waiting count up to 50 ms old (BullToolQueue), so a call within
    // that window of the waiting one's check is not yet counted against it.
    await untilClockPasses(Date.now() + 150);
    const refused = await execute('fixture-ok');
    expectGatewayError(refused, { status: 429, type: 'queue_full' });
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const answer of await Promise.all([...slow, waiting])) expect(answer.status).toBe(200);
  });

  it('survives a server that crashes mid-call: 502 after the retries, runners alive, the client reconnects', async () => {
    const runnerPids = async () =>
      (await clients())
        .find((client) => client.name === 'fixture')
        .runners.map((runner: Json) => runner.pid)
        .sort();
    const before = await runnerPids();
    expectGatewayError(await execute('fixture-crash'), { status: 502, type: 'upstream_unreachable' });
    await waitFor(async () => (await execute('fixture-ok')).status === 200, { timeoutMs: 10_000 });
    expect(await runnerPids()).toEqual(before);
  });

  it('deletes a client: it disappears, its tools are gone and its server process ends', async () => {
    const pid = Number((await execute('fixture-pid')).body.content);
    expect(process.kill(pid, 0)).toBe(true);
    const deleted = await call('DELETE', `${gateway.adminUrl}/api/mcp/client/fixture`, undefined, ADMIN);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'success', deleted: 'fixture' });
    expect((await clients()).map((client) => client.name)).not.toContain('fixture');
    await waitFor(async () => (await execute('fixture-ok')).status === 400);
    expectGatewayError(await execute('fixture-ok'), { status: 400, type: 'mcp_tool_not_found' });
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect(
      (await call('DELETE', `${gateway.adminUrl}/api/mcp/client/fixture`, undefined, ADMIN)).status,
    ).toBe(404);
  });

  it.runIf(mode === 'cluster')(
    'cluster only: a runner killed mid-call: another runner finishes the call, the restarted one reconnects',
    { timeout: scaled(40_000) },
    async () => {
      const cluster = gateway as Awaited<ReturnType<typeof startCluster>>;
      const before = (await clients()).find((client) => client.name === 'everything');
      const oldPids = new Set(before.runners.map((runner: Json) => runner.pid));
      const slow = execute('everything-trigger-long-running-operation', { duration: 3, steps: 3 });
      // The runner running the job is the one BullMQ recorded as its processor.
      const redis = new Redis(REDIS_URL);
      try {
        const bull = `${cluster.prefix}{bull}:gw-mcp-tools`;
        const runnerPid = await waitFor(async () => {
          const [id] = await redis.lrange(`${bull}:active`, 0, -1);
          const processedBy = id ? await redis.hget(`${bull}:${id}`, 'pb') : null;
          return processedBy ? Number(processedBy.split(':').at(-1)) : undefined;
        });
        expect(oldPids.has(runnerPid)).toBe(true);
        process.kill(runnerPid, 'SIGKILL');
      } finally {
        redis.disconnect();
      }
      const answer = await slow;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.content).toContain('Long running operation completed');
      // The launcher restarts the killed runner, which reconnects its clients from the store.
      await waitFor(
        async () =>
          (await clients())
            .find((client) => client.name === 'everything')
            ?.runners.some((runner: Json) => !oldPids.has(runner.pid) && runner.state === 'connected'),
        { timeoutMs: 15_000 },
      );
    },
  );
});
