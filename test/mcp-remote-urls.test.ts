// The config file's `network.mcp_remote_urls` as the MCP server reads a URL (issue 42 defect 2): a holder of
// `mcp:write` without `mcp:remote` added `http://host/mcp/%2e%2e%2fadmin` under the prefix `http://host/mcp`,
// which the URL parser keeps as one segment and the server decodes to `/admin`. Both modes; the listed URL itself
// connects for real.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  type RunningMcpServer,
  scaled,
  startCluster,
  startEmbedded,
  startEverythingServer,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';

const ADMIN_TOKEN = 'mcp-remote-urls-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 }),
  ],
] as const;

let server: RunningMcpServer;
beforeAll(async () => {
  server = await startEverythingServer('streamableHttp');
});
afterAll(async () => server?.close());

describe.each(MODES)('MCP remote URL prefixes (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  let editor: Record<string, string>;
  const api = (path: string) => `${gateway.adminUrl}/api${path}`;

  beforeAll(async () => {
    // server.url is http://127.0.0.1:<port>/mcp: the prefix lets an editor add it, and nothing outside /mcp.
    gateway = await start({ network: { mcp_remote_urls: [server.url] } });
    const role = await call(
      'POST',
      api('/roles'),
      { id: 'mcp-editor', permissions: ['mcp:read', 'mcp:write'] },
      ADMIN,
    );
    expect(role.status, JSON.stringify(role.body)).toBe(201);
    const token = await call('POST', api('/tokens'), { name: 'editor', role: 'mcp-editor' }, ADMIN);
    editor = { authorization: `Bearer ${token.body.token}` };
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('refuses a URL whose encoded dot segments leave the prefix once decoded; the listed URL connects', async () => {
    const base = server.url.slice(0, -'/mcp'.length);
    for (const [index, path] of ['/mcp/%2e%2e%2fadmin', '/mcp/%2E%2E%2Fadmin', '/mcp/.%2e/admin'].entries()) {
      const name = `escape-${index}`;
      const added = await call(
        'POST',
        api('/mcp/client'),
        { name, connection_type: 'http', connection_string: `${base}${path}` },
        editor,
      );
      expect(added.status, `${path}: ${JSON.stringify(added.body)}`).toBe(403);
      expect(added.body.error).toMatchObject({ code: 'missing_permission' });
      expect(added.body.error.message).toContain('network.mcp_remote_urls');
      expect((await get(api(`/mcp/client/${name}`), ADMIN)).status).toBe(404);
    }
    const listed = await call(
      'POST',
      api('/mcp/client'),
      { name: 'listed', connection_type: 'http', connection_string: server.url },
      editor,
    );
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const state = await waitFor(async () => {
      const client = (await get(api('/mcp/client/listed'), ADMIN)).body as Json;
      return client.state === 'connected' && client.state;
    });
    expect(state).toBe('connected');
  });
});
