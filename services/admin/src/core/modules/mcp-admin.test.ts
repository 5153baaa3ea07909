// The MCP admin handlers over a memory store, without runners: the role rule for stdio clients, the success
// bodies, filter edits and the errors.
import { McpRegistry } from '@gw/mcp-runner/control';
import { outboundPolicy, secretReferenceRule, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeCaller } from '../../testing/admin-harness.ts';
import { authorizeAdmin } from '../access/admin-auth.ts';
import type { AdminRequest } from '../http/admin-route.ts';
import { createMcpAdmin } from './mcp-admin.ts';

const STDIO = {
  name: 'local',
  connection_type: 'stdio',
  stdio_config: { command: 'node', args: ['server.js'] },
};
const HTTP = { name: 'remote', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp' };

describe('MCP admin', () => {
  let store: MemoryStore;
  let handle: ReturnType<typeof routeCaller>;

  beforeAll(async () => {
    store = await MemoryStore.open();
    handle = routeCaller(
      createMcpAdmin({
        registry: new McpRegistry({ store, logger: silentLogger() }),
        reportWaitMs: 50,
        outbound: outboundPolicy(),
        secretReferences: secretReferenceRule({}),
      }),
    );
  });
  afterAll(() => store.close());

  const request = (method: string, path: string, body?: unknown, role: AdminRequest['role'] = 'admin') =>
    handle(method, `/api/${path}`, { role, body });
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as { status: number; type: string; message: string };
    }
    throw new Error('expected a failure');
  };

  it("lets only Admin add stdio clients, and http/sse ones outside the config file's allow-list", async () => {
    expect(await failure(request('POST', 'mcp/client', STDIO, 'anonymous'))).toMatchObject({
      status: 403,
      type: 'forbidden',
    });
    expect(await failure(request('POST', 'mcp/client', HTTP, 'anonymous'))).toMatchObject({
      status: 403,
      type: 'forbidden',
      message: expect.stringContaining('mcp:remote'),
    });
    const remote = await request('POST', 'mcp/client', HTTP);
    expect(remote).toMatchObject({ status: 200, body: { status: 'success', client: { name: 'remote' } } });
    const local = await request('POST', 'mcp/client', STDIO);
    // No runner runs here: the client is listed, disconnected, and says why.
    expect(local.body).toMatchObject({
      status: 'success',
      message: "MCP client 'local' added",
      client: {
        name: 'local',
        state: 'disconnected',
        tools: [],
        error: expect.stringContaining('no mcp-runner'),
      },
    });
    expect((local.body as { client: object }).client).not.toHaveProperty('definitions');
  });

  it('validates the config and refuses a second client of the same name', async () => {
    expect(
      await failure(request('POST', 'mcp/client', { name: 'x', connection_type: 'http' })),
    ).toMatchObject({
      status: 400,
      message: expect.stringContaining('connection_string'),
    });
    expect(await failure(request('POST', 'mcp/client', HTTP))).toMatchObject({ status: 409 });
  });

  it('lists clients, edits filters (null removes a list) and refuses other edits', async () => {
    const listed = await request('GET', 'mcp/clients');
    expect((listed.body as Array<{ name: string }>).map((client) => client.name)).toEqual([
      'local',
      'remote',
    ]);
    const edited = await request('PUT', 'mcp/client/remote', {
      tools_to_execute: ['a'],
      tools_to_skip: ['b'],
    });
    expect(edited.body).toMatchObject({
      status: 'success',
      client: { config: { tools_to_execute: ['a'], tools_to_skip: ['b'] } },
    });
    const cleared = await request('PUT', 'mcp/client/remote', { tools_to_execute: null });
    expect((cleared.body as { client: { config: object } }).client.config).not.toHaveProperty(
      'tools_to_execute',
    );
    expect(
      await failure(request('PUT', 'mcp/client/remote', { connection_string: 'http://127.0.0.1:1' })),
    ).toMatchObject({ status: 400 });
    expect(await failure(request('PUT', 'mcp/client/remote', { name: 'renamed' }))).toMatchObject({
      status: 400,
    });
    expect(await failure(request('PUT', 'mcp/client/missing', {}))).toMatchObject({ status: 404 });
  });

  it('takes PATCH as the same edit: what it names changes, the rest stays', async () => {
    await request('PUT', 'mcp/client/remote', { tools_to_execute: ['a'], tools_to_skip: ['b'] });
    const patched = await request('PATCH', 'mcp/client/remote', {
      tools_to_skip: null,
      allow_by_default: false,
    });
    const { config } = (patched.body as { client: { config: Record<string, unknown> } }).client;
    expect(config).toMatchObject({
      tools_to_execute: ['a'],
      allow_by_default: false,
      connection_string: expect.any(String),
    });
    expect(config).not.toHaveProperty('tools_to_skip');
    expect(await failure(request('PATCH', 'mcp/client/remote', { connection_type: 'sse' }))).toMatchObject({
      status: 400,
      message: expect.stringContaining('connection_type'),
    });
  });

  it('reconnects and deletes by name, 404 for unknown names', async () => {
    expect(await request('POST', 'mcp/client/remote/reconnect')).toMatchObject({
      status: 200,
      body: { status: 'success', client: { name: 'remote' } },
    });
    expect(await request('DELETE', 'mcp/client/remote')).toEqual({
      status: 200,
      body: { status: 'success', deleted: 'remote' },
    });
    expect(await failure(request('DELETE', 'mcp/client/remote'))).toMatchObject({ status: 404 });
    expect(await failure(request('POST', 'mcp/client/remote/reconnect'))).toMatchObject({ status: 404 });
    expect(await failure(request('GET', 'mcp/client/remote'))).toMatchObject({ status: 404 });
    expect(await failure(request('POST', 'mcp/client/local'))).toMatchObject({ status: 405 });
  });
});

describe('MCP admin: remote clients', () => {
  let store: MemoryStore;
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as { status: number; type: string; message: string };
    }
    throw new Error('expected a failure');
  };
  beforeAll(async () => {
    store = await MemoryStore.open();
  });
  afterAll(() => store.close());

  const add = (routes: ReturnType<typeof createMcpAdmin>, body: unknown, role: AdminRequest['role']) =>
    routeCaller(routes)('POST', '/api/mcp/client', { role, body });

  it('lets mcp:write alone add an http client under a listed prefix, and nowhere else', async () => {
    const handle = createMcpAdmin({
      registry: new McpRegistry({ store, logger: silentLogger() }),
      reportWaitMs: 10,
      outbound: outboundPolicy(),
      secretReferences: secretReferenceRule({}),
      remoteUrls: ['http://127.0.0.1:9/tools/'],
    });
    const listed = {
      name: 'listed',
      connection_type: 'http',
      connection_string: 'http://127.0.0.1:9/tools/mcp',
    };
    expect(await add(handle, listed, 'anonymous')).toMatchObject({ status: 200 });
    // Encoded characters that stay under the prefix once decoded are no escape.
    const encoded = {
      ...listed,
      name: 'encoded',
      connection_string: 'http://127.0.0.1:9/tools/a%2fb/%2e%2e/mcp',
    };
    expect(await add(handle, encoded, 'anonymous')).toMatchObject({ status: 200 });
    for (const connection_string of [
      'http://127.0.0.1:9/toolsx',
      'http://127.0.0.1:9/other',
      'http://127.0.0.1:9@127.0.0.2:9/tools/mcp',
      // A server decodes these to /admin, /admin and /other (issue 42, defect 2).
      'http://127.0.0.1:9/tools/%2e%2e%2fadmin',
      'http://127.0.0.1:9/tools/%2E%2E%2Fadmin',
      'http://127.0.0.1:9/tools/.%2e/other',
      'http://127.0.0.1:9/tools/mcp%2f..%2f..%2fother',
      'http://127.0.0.1:9/tools/%2e%2e%5cadmin',
      'http://127.0.0.1:9/tools/%252e%252e%252fadmin',
    ]) {
      expect(
        await failure(add(handle, { name: 'other', connection_type: 'sse', connection_string }, 'anonymous')),
      ).toMatchObject({ status: 403 });
    }
  });

  it('refuses, for Admin too, a URL the outbound address policy refuses', async () => {
    const handle = createMcpAdmin({
      registry: new McpRegistry({ store, logger: silentLogger() }),
      reportWaitMs: 10,
      outbound: outboundPolicy(),
      secretReferences: secretReferenceRule({}),
    });
    for (const connection_string of [
      'http://[::ffff:169.254.169.254]/',
      'http://0xa9fea9fe/',
      'http://metadata.google.internal./',
      'http://10.0.0.1/',
    ]) {
      expect(
        await failure(add(handle, { name: 'meta', connection_type: 'http', connection_string }, 'admin')),
      ).toMatchObject({
        status: 400,
        type: 'invalid_request',
        message: expect.stringMatching(/^connection_string: /),
      });
    }
    expect(await store.get('mcp-clients', 'meta')).toBeUndefined();
  });
});

describe('admin roles', () => {
  it('is Admin with the admin token; anonymous only where the operator opened the API', () => {
    const token = { adminToken: 'secret', allowAnonymous: false };
    expect(authorizeAdmin({ authorization: 'Bearer secret' }, token)).toBe('admin');
    expect(() => authorizeAdmin({}, token)).toThrow();
    const open = { adminToken: 'secret', allowAnonymous: true };
    expect(authorizeAdmin({}, open)).toBe('anonymous');
    expect(authorizeAdmin({ authorization: 'Bearer wrong' }, open)).toBe('anonymous');
    expect(authorizeAdmin({ authorization: 'Bearer secret' }, open)).toBe('admin');
    expect(authorizeAdmin({}, { allowAnonymous: true })).toBe('anonymous');
  });
});
