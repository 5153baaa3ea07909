// The runner core against real MCP servers from npm (server-everything over stdio, Streamable HTTP and SSE;
// server-memory; server-filesystem confined to a temp dir) and a fixture server that crashes, hangs and fails.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type McpClientConfig, mcpClientConfigSchema, outboundPolicy, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import {
  FIXTURE_MCP_SERVER,
  MCP_SERVER_ENTRIES,
  type RunningMcpServer,
  startEverythingServer,
  stdioServer,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpRegistry } from './mcp-registry.ts';
import { McpRunnerCore } from './mcp-runner-core.ts';
import { type ToolJob, ToolJobFailure } from './mcp-runner-service.ts';

const SETTINGS = { tool_timeout_ms: 5_000, connect_timeout_ms: 10_000, max_concurrency_per_client: 4 };

function job(client: string, tool: string, args: Record<string, unknown> = {}): ToolJob {
  return {
    client,
    tool,
    arguments: args,
    callId: 'call-1',
    requestId: 'req-1',
    notAfter: Date.now() + 10_000,
  };
}

async function failure(promise: Promise<unknown>): Promise<ToolJobFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ToolJobFailure) return error;
    throw error;
  }
  throw new Error('expected the job to fail');
}

async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('McpRunnerCore', () => {
  let store: MemoryStore;
  let registry: McpRegistry;
  let core: McpRunnerCore;
  let directory: string;
  let http: RunningMcpServer;
  let sse: RunningMcpServer;
  const transitions: string[] = [];

  const connected = (name: string) =>
    until(async () => {
      const view = await registry.view(name);
      return view.state === 'connected' && view;
    });

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gw-mcp-core-'));
    [http, sse] = await Promise.all([startEverythingServer('streamableHttp'), startEverythingServer('sse')]);
    store = await MemoryStore.open();
    registry = new McpRegistry({ store, logger: silentLogger() });
    const configs: unknown[] = [
      {
        name: 'everything',
        connection_type: 'stdio',
        stdio_config: stdioServer(MCP_SERVER_ENTRIES.everything, ['stdio']),
      },
      { name: 'remote', connection_type: 'http', connection_string: http.url },
      { name: 'legacy', connection_type: 'sse', connection_string: sse.url },
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
      {
        name: 'fixture',
        connection_type: 'stdio',
        stdio_config: stdioServer(FIXTURE_MCP_SERVER, [], ['GW_TEST_PASSED']),
      },
    ];
    await registry.seed(configs.map((config) => mcpClientConfigSchema.parse(config)));
    core = await McpRunnerCore.start({
      outbound: outboundPolicy(),
      registry,
      logger: silentLogger(),
      settings: SETTINGS,
      runnerId: 'test-runner',
      environment: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        MEMORY_FILE_PATH: join(directory, 'memory.jsonl'),
        GW_TEST_PASSED: 'yes',
        GW_TEST_SECRET: 'must-not-leak',
      },
      backoff: { initialMs: 100, maxMs: 1_000 },
    });
    const original = registry.writeStatus.bind(registry);
    registry.writeStatus = async (status) => {
      if (status.client === 'fixture') transitions.push(status.state);
      return original(status);
    };
    await Promise.all(['everything', 'remote', 'legacy', 'memory', 'files', 'fixture'].map(connected));
  });

  afterAll(async () => {
    await core?.close();
    await Promise.all([http?.close(), sse?.close()]);
    await store?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('discovers the tools of server-everything over stdio, Streamable HTTP and SSE, and runs them', async () => {
    for (const name of ['everything', 'remote', 'legacy']) {
      const view = await registry.view(name);
      expect(view.tools, name).toEqual(
        expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']),
      );
      expect(await core.execute(job(name, 'echo', { message: `hi ${name}` }))).toEqual({
        content: `Echo: hi ${name}`,
        isError: false,
      });
      expect((await core.execute(job(name, 'get-sum', { a: 2, b: 3 }))).content).toContain('5');
    }
  });

  it('answers a tool input error as a tool result, not as a failure', async () => {
    const result = await core.execute(job('everything', 'echo', { wrong: 1 }));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/invalid/i);
  });

  it('passes only the variables named in envs to a stdio server', async () => {
    const names = JSON.parse((await core.execute(job('fixture', 'env'))).content) as string[];
    expect(names).toContain('GW_TEST_PASSED');
    expect(names).not.toContain('GW_TEST_SECRET');
    expect(names).not.toContain('MEMORY_FILE_PATH');
    for (const name of names)
      expect(['GW_TEST_PASSED', 'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']).toContain(name);
  });

  it('runs server-memory with its file from envs', async () => {
    const created = await core.execute(
      job('memory', 'create_entities', {
        entities: [{ name: 'gw', entityType: 'gateway', observations: ['routes requests'] }],
      }),
    );
    expect(created.isError).toBe(false);
    const graph = await core.execute(job('memory', 'read_graph'));
    expect(graph.content).toContain('routes requests');
    expect(await readFile(join(directory, 'memory.jsonl'), 'utf8')).toContain('"gw"');
  });

  it('confines server-filesystem to its directory: a path outside is a tool error result', async () => {
    const written = await core.execute(
      job('files', 'write_file', { path: join(directory, 'note.txt'), content: 'hello files' }),
    );
    expect(written.isError).toBe(false);
    const read = await core.execute(job('files', 'read_text_file', { path: join(directory, 'note.txt') }));
    expect(read.content).toBe('hello files');
    const outside = await core.execute(job('files', 'read_text_file', { path: '/etc/hostname' }));
    expect(outside.isError).toBe(true);
    expect(outside.content).toMatch(/denied|outside/i);
  });

  it("returns a tool's own failure as its result", async () => {
    expect(await core.execute(job('fixture', 'fail'))).toEqual({
      content: 'it failed on purpose',
      isError: true,
    });
  });

  it('times out a hanging tool (final 504) and keeps the connection usable', async () => {
    const started = Date.now();
    const quick = await McpRunnerCore.start({
      outbound: outboundPolicy(),
      registry,
      logger: silentLogger(),
      settings: { ...SETTINGS, tool_timeout_ms: 300 },
      runnerId: 'quick-runner',
      environment: { PATH: process.env['PATH'] },
    });
    try {
      await until(() => quick.connection('fixture')?.state === 'connected');
      const hung = await failure(quick.execute(job('fixture', 'hang')));
      expect(hung.retryable).toBe(false);
      expect(hung.error).toMatchObject({ type: 'upstream_timeout', status: 504 });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await quick.execute(job('fixture', 'ok'))).content).toBe('ok');
    } finally {
      await quick.close();
    }
  });

  it('survives a server that crashes mid-call: retryable 502, error state, then reconnects', async () => {
    const before = Number((await core.execute(job('fixture', 'pid'))).content);
    transitions.length = 0;
    const crashed = await failure(core.execute(job('fixture', 'crash')));
    expect(crashed.retryable).toBe(true);
    expect(crashed.error).toMatchObject({ type: 'upstream_unreachable', status: 502 });
    await until(() => core.connection('fixture')?.state === 'connected');
    expect(transitions).toContain('error');
    expect(transitions.indexOf('error')).toBeLessThan(transitions.lastIndexOf('connected'));
    const after = Number((await core.execute(job('fixture', 'pid'))).content);
    expect(after).not.toBe(before);
    expect(isAlive(before)).toBe(false);
  });

  it('refreshes the tool list when the server says it changed', async () => {
    await core.execute(job('fixture', 'add-tool', { name: 'late-tool' }));
    await until(async () => (await registry.view('fixture')).tools.includes('late-tool'));
    expect(await core.execute(job('fixture', 'late-tool'))).toEqual({
      content: 'I am late-tool',
      isError: false,
    });
  });

  it("enforces the client's tools_to_skip and tools_to_execute at the runner", async () => {
    const config = (await registry.getConfig('everything')) as McpClientConfig;
    await registry.putConfig({ ...config, tools_to_skip: ['get-sum'] });
    await until(() => core.connection('everything')?.config.tools_to_skip?.includes('get-sum'));
    const refused = await failure(core.execute(job('everything', 'get-sum', { a: 1, b: 1 })));
    expect(refused.error).toMatchObject({ type: 'mcp_tool_not_allowed', status: 403 });
    expect(refused.retryable).toBe(false);
    expect(core.connection('everything')?.state).toBe('connected');
    await registry.putConfig({ ...config, tools_to_execute: ['echo'] });
    await until(() => core.connection('everything')?.config.tools_to_execute?.length === 1);
    expect((await failure(core.execute(job('everything', 'get-env')))).error.status).toBe(403);
    expect((await core.execute(job('everything', 'echo', { message: 'x' }))).content).toBe('Echo: x');
    await registry.putConfig(config);
  });

  it('answers unknown clients and tools with final 400s and expired jobs with 504', async () => {
    expect((await failure(core.execute(job('nobody', 'echo')))).error).toMatchObject({
      type: 'mcp_tool_not_found',
    });
    expect((await failure(core.execute(job('everything', 'no-such-tool')))).error).toMatchObject({
      type: 'mcp_tool_not_found',
    });
    const expired = await failure(core.execute({ ...job('everything', 'echo'), notAfter: Date.now() - 1 }));
    expect(expired.error).toMatchObject({ type: 'upstream_timeout', status: 504 });
  });

  it('bounds the calls sent to one client at once', async () => {
    const bounded = await McpRunnerCore.start({
      outbound: outboundPolicy(),
      registry,
      logger: silentLogger(),
      settings: { ...SETTINGS, max_concurrency_per_client: 1 },
      runnerId: 'bounded-runner',
      environment: { PATH: process.env['PATH'] },
    });
    try {
      await until(() => bounded.connection('fixture')?.state === 'connected');
      const started = Date.now();
      await Promise.all([1, 2, 3].map(() => bounded.execute(job('fixture', 'sleep', { ms: 200 }))));
      expect(Date.now() - started).toBeGreaterThanOrEqual(580);
    } finally {
      await bounded.close();
    }
  });

  it('reports a client that cannot start as error, with the reason', async () => {
    await registry.putConfig(
      mcpClientConfigSchema.parse({
        name: 'broken',
        connection_type: 'stdio',
        stdio_config: { command: join(directory, 'no-such-command') },
      }),
    );
    const view = await until(async () => {
      const current = await registry.view('broken');
      return current.state === 'error' && current;
    });
    expect(view.error).toMatch(/connect failed/);
    const refused = await failure(core.execute(job('broken', 'anything')));
    expect(refused.retryable).toBe(true);
  });

  it('reconnects on request and disconnects a removed client (its server process ends)', async () => {
    const first = Number((await core.execute(job('fixture', 'pid'))).content);
    await registry.requestReconnect('fixture');
    const second = await until(async () => {
      if (core.connection('fixture')?.state !== 'connected') return undefined;
      const pid = Number((await core.execute(job('fixture', 'pid'))).content);
      return pid !== first && pid;
    });
    await until(() => !isAlive(first));
    expect(await registry.deleteConfig('fixture')).toBe(true);
    await until(() => core.connection('fixture') === undefined);
    await until(() => !isAlive(second));
    await until(async () => (await registry.listStatuses()).every((status) => status.client !== 'fixture'));
  });
});
