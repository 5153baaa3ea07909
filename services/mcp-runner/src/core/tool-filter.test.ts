// The three filtering levels of docs/mcp.md "Filtering" and the naming scheme, as pure functions.
import { type GatewayError, mcpClientConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { McpStatus } from './mcp-records.ts';
import { aggregateView, NO_RUNNER_MESSAGE } from './mcp-registry.ts';
import {
  availableTools,
  buildSnapshot,
  parseIncludeHeader,
  resolveToolCall,
  type ToolAccess,
} from './tool-filter.ts';
import { gatewayToolName } from './tool-names.ts';

function report(client: string, tools: string[], state: McpStatus['state'] = 'connected'): McpStatus {
  return {
    client,
    runner: 'r1',
    state,
    tools: tools.map((name) => ({ name, inputSchema: { type: 'object' } })),
    updated_at: 1,
    expires_at: Number.MAX_SAFE_INTEGER,
  };
}

function client(config: Record<string, unknown>, tools: string[], state: McpStatus['state'] = 'connected') {
  const parsed = mcpClientConfigSchema.parse({
    connection_type: 'http',
    connection_string: 'http://127.0.0.1:1/mcp',
    ...config,
  });
  return aggregateView(parsed, [report(parsed.name, tools, state)]);
}

const snapshot = buildSnapshot([
  client({ name: 'search', allow_by_default: true, tools_to_auto_execute: ['lookup'] }, [
    'lookup',
    'fetch',
    'admin',
  ]),
  client({ name: 'files', tools_to_skip: ['delete'] }, ['read', 'write', 'delete']),
  client({ name: 'mail', tools_to_execute: ['send'] }, ['send', 'purge', 'lookup']),
]);

const names = (access: ToolAccess) => availableTools(snapshot, access).map((tool) => tool.name);

function refusal(name: string, access: ToolAccess): GatewayError {
  try {
    resolveToolCall(snapshot, name, access);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error(`${name} was allowed`);
}

describe('tool names', () => {
  it('are always <client>-<tool>, in the function-name alphabet', () => {
    expect(gatewayToolName('files', 'read')).toBe('files-read');
    expect(gatewayToolName('my_client', 'ns.tool/v2')).toBe('my_client-ns_tool_v2');
    expect([...snapshot.tools.keys()]).toContain('mail-lookup');
    expect(snapshot.tools.get('search-lookup')).toMatchObject({
      client: 'search',
      tool: 'lookup',
      autoExecute: true,
    });
    expect(snapshot.tools.get('mail-lookup')?.autoExecute).toBe(false);
  });
});

describe('filtering', () => {
  it('level 1: without a virtual key every client is available, less what its config excludes', () => {
    expect(names({})).toEqual([
      'search-lookup',
      'search-fetch',
      'search-admin',
      'files-read',
      'files-write',
      'mail-send',
    ]);
    expect(refusal('files-delete', {})).toMatchObject({ status: 403, type: 'mcp_tool_not_allowed' });
    expect(refusal('mail-purge', {}).message).toContain('configuration');
  });

  it('level 3: a key allows selected tools, * or none per client; allow-by-default clients need no entry', () => {
    const key: ToolAccess = {
      keyPolicy: [
        { client: 'files', tools: ['read'] },
        { client: 'mail', tools: ['*'] },
      ],
      keyName: 'team-key',
    };
    expect(names(key)).toEqual(['search-lookup', 'search-fetch', 'search-admin', 'files-read', 'mail-send']);
    expect(refusal('files-write', key).message).toContain("virtual key's MCP policy of 'team-key'");
    // `*` on the key never brings back what the client's config excludes.
    expect(refusal('mail-purge', key).message).toContain('configuration');
    expect(names({ keyPolicy: [] })).toEqual(['search-lookup', 'search-fetch', 'search-admin']);
    expect(names({ keyPolicy: [{ client: 'search', tools: [] }] })).toEqual([]);
  });

  it('level 2: header entries narrow, and entries the key does not allow are dropped', () => {
    const include = parseIncludeHeader('search-lookup, files-*, mail-send');
    expect(include).toEqual(['search-lookup', 'files-*', 'mail-send']);
    expect(names({ include })).toEqual(['search-lookup', 'files-read', 'files-write', 'mail-send']);
    const key: ToolAccess = { keyPolicy: [{ client: 'files', tools: ['read'] }], include };
    expect(names(key)).toEqual(['search-lookup', 'files-read']);
    expect(refusal('mail-send', key).message).toContain('virtual key');
    expect(refusal('search-fetch', key).message).toContain('x-gw-mcp-include-tools');
    expect(names({ include: ['*'] })).toHaveLength(6);
    expect(names({ include: [] })).toEqual([]);
    expect(parseIncludeHeader(undefined)).toBeUndefined();
  });

  it('resolves a bare server name when one usable client offers it', () => {
    expect(resolveToolCall(snapshot, 'read', {}).name).toBe('files-read');
    // Two clients offer `lookup`; only one of them is usable (mail's config allows only `send`).
    expect(resolveToolCall(snapshot, 'lookup', {}).name).toBe('search-lookup');
    const twice = buildSnapshot([client({ name: 'a' }, ['ping']), client({ name: 'b' }, ['ping'])]);
    expect(() => resolveToolCall(twice, 'ping', {})).toThrow(
      expect.objectContaining({
        type: 'mcp_tool_not_found',
        message: expect.stringContaining("'a-ping', 'b-ping'"),
      }),
    );
    expect(resolveToolCall(twice, 'ping', { keyPolicy: [{ client: 'b', tools: ['*'] }] }).name).toBe(
      'b-ping',
    );
  });

  it('answers 400 for unknown tools and for no clients at all, 503 for a client without a connection', () => {
    expect(refusal('nothing-here', {})).toMatchObject({ type: 'mcp_tool_not_found', status: 400 });
    expect(() => resolveToolCall(buildSnapshot([]), 'files-read', {})).toThrow(
      expect.objectContaining({ type: 'mcp_not_configured', status: 400 }),
    );
    const down = buildSnapshot([client({ name: 'down' }, [], 'error')]);
    expect(() => resolveToolCall(down, 'down-anything', {})).toThrow(
      expect.objectContaining({ type: 'service_unavailable', status: 503 }),
    );
  });
});

describe('aggregated client state', () => {
  const config = mcpClientConfigSchema.parse({
    name: 'c',
    connection_type: 'sse',
    connection_string: 'http://127.0.0.1:1/sse',
  });

  it('is connected when any runner holds a connection, else the most hopeful state', () => {
    const error = { ...report('c', [], 'error'), runner: 'r2', error: 'boom', updated_at: 5 };
    expect(aggregateView(config, [report('c', ['t']), error])).toMatchObject({
      state: 'connected',
      tools: ['t'],
    });
    expect(aggregateView(config, [error])).toMatchObject({ state: 'error', error: 'boom' });
    expect(aggregateView(config, [error, { ...report('c', [], 'connecting'), runner: 'r3' }]).state).toBe(
      'connecting',
    );
    expect(aggregateView(config, [])).toMatchObject({
      state: 'disconnected',
      error: NO_RUNNER_MESSAGE,
      tools: [],
    });
  });
});
