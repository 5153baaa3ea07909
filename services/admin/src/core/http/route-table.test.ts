// The role matrix: every row of the route table × every role (and no credential), through the real express app;
// what the table refuses when it is built; and 404, 405 and `Allow` as the table derives them.
import { afterAll, describe, expect, it } from 'vitest';
import { adminCall, startAdminHarness } from '../../testing/admin-harness.ts';
import { BUILT_IN_ROLES, PERMISSIONS } from '../access/permissions.ts';
import { type AdminRoute, ROUTE_METHODS } from './admin-route.ts';
import { createRouteTable } from './route-table.ts';

const harness = await startAdminHarness();
afterAll(async () => harness.close());

const AUDITOR = ['config:read', 'providers:read', 'tokens:read'];
const GRANTS: Record<string, readonly string[]> = {
  ...Object.fromEntries(BUILT_IN_ROLES.map((role) => [role.id, role.permissions])),
  auditor: AUDITOR,
};

/** A concrete path of a row's pattern; virtual keys are the developer's own (team-a). */
const concrete = (path: string) => path.replace(/:id/g, 'key-a').replace(/:[a-z]+/g, 'x');

/** Every row the app mounts, with a concrete path; `open` rows are checked apart (whoami). */
const CASES = harness.app.routes
  .filter((row) => row.permission !== 'open')
  .map((row) => ({ method: row.method, path: concrete(row.path), row }));

describe('the route table', () => {
  const handle = async () => ({ status: 200, body: {} });

  it('refuses, when built, a row without a permission, with an unknown one, declared twice, or a path express would read otherwise', () => {
    // @ts-expect-error: a row names its permission (or 'open'); the compiler refuses one that does not
    const bare: AdminRoute = { method: 'GET', path: '/things', handle };
    expect(() => createRouteTable([bare])).toThrow(/GET \/things declares no permission/);
    expect(() => createRouteTable([{ ...bare, permission: 'things:read' as never }])).toThrow(
      /declares no permission/,
    );
    const row: AdminRoute = { method: 'GET', path: '/things/:id', permission: 'config:read', handle };
    expect(() => createRouteTable([row, { ...row, path: '/things/:name' }])).toThrow(/declared twice/);
    for (const path of ['things', '/things/*rest', '/Things', '/things/{:id}'])
      expect(() => createRouteTable([{ ...row, path }]), path).toThrow(/lowercase words and :parameters/);
  });

  it('has every mounted row with a known permission, and whoami and the gateway address the only open ones', () => {
    for (const row of harness.app.routes)
      expect([...PERMISSIONS, 'open'], `${row.method} ${row.path}`).toContain(row.permission);
    const open = harness.app.routes.filter((row) => row.permission === 'open');
    expect(open.map((row) => `${row.method} ${row.path}`)).toEqual(['GET /whoami', 'GET /gateway-address']);
  });

  it('answers 405 with Allow naming exactly the methods the table has for the path, and 404 where it has none', async () => {
    const table = createRouteTable(harness.app.routes);
    const paths = [...new Set(harness.app.routes.map((row) => concrete(row.path)))];
    for (const path of paths) {
      const segments = path.split('/').filter(Boolean);
      const declared = ROUTE_METHODS.filter((method) => table.match(method, segments));
      const absent = ROUTE_METHODS.find((method) => !declared.includes(method)) ?? 'OPTIONS';
      const response = await fetch(`${harness.url}/api${path}`, {
        method: absent,
        headers: { authorization: `Bearer ${harness.tokens.admin}`, 'content-type': 'application/json' },
        ...(absent !== 'GET' && absent !== 'DELETE' && { body: '{}' }),
      });
      const what = `${absent} ${path}`;
      expect(response.status, what).toBe(405);
      const allow = declared.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
      expect(response.headers.get('allow'), what).toBe(allow.join(', '));
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error.type, what).toBe('method_not_allowed');
      expect(body.error.message, what).toContain(`${absent} is not allowed on /api${path}; use `);
    }
    const put = await adminCall(`${harness.url}/api/providers`, 'PUT', {
      token: harness.tokens.admin,
      body: {},
    });
    expect(put.body.error.message).toBe('PUT is not allowed on /api/providers; use GET or POST');
    const missing = await adminCall(`${harness.url}/api/providers/openai/extra`, 'GET', {
      token: harness.tokens.admin,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('no endpoint at GET /api/providers/openai/extra');
  });

  it('serves HEAD where the table has GET', async () => {
    const head = await fetch(`${harness.url}/api/config`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${harness.tokens.viewer}` },
    });
    expect(head.status).toBe(200);
  });
});

describe('role matrix', () => {
  it.each(CASES)('$method /api$path: 401 without a credential', async ({ method, path }) => {
    const answer = await adminCall(`${harness.url}/api${path}`, method);
    expect(answer.status).toBe(401);
    expect(answer.body.error.type).toBe('unauthorized');
  });

  it.each(CASES)(
    '$method /api$path ($row.permission): each role allowed or denied',
    async ({ method, path, row }) => {
      for (const [role, token] of Object.entries(harness.tokens)) {
        const answer = await adminCall(`${harness.url}/api${path}`, method, {
          token,
          ...(method !== 'GET' && method !== 'DELETE' && { body: {} }),
        });
        const allowed = GRANTS[role]!.includes(row.permission);
        const what = `${role} ${method} ${path} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
        if (allowed) {
          expect(answer.status, what).not.toBe(401);
          expect(answer.body?.error?.code, what).not.toBe('missing_permission');
        } else {
          expect(answer.status, what).toBe(403);
          expect(answer.body.error.code, what).toBe('missing_permission');
          expect(answer.body.error.message, what).toContain(row.permission);
          expect(answer.body.error.message, what).toContain(role);
        }
      }
    },
  );

  it('lets only Admin reach a method or path no row declares (and learn it is a 405 or 404)', async () => {
    const admin = await adminCall(`${harness.url}/api/providers`, 'OPTIONS', { token: harness.tokens.admin });
    expect(admin.status).toBe(405);
    const viewer = await adminCall(`${harness.url}/api/providers`, 'OPTIONS', {
      token: harness.tokens.viewer,
    });
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.message).toContain('only Admin');
    const missing = await adminCall(`${harness.url}/api/nothing-here`, 'GET', {
      token: harness.tokens.viewer,
    });
    expect(missing.status).toBe(404);
  });
});

describe('GET /api/whoami (open to every authenticated caller)', () => {
  it('answers each role its own permissions, and 401 without a credential', async () => {
    for (const [role, token] of Object.entries(harness.tokens)) {
      const answer = await adminCall(`${harness.url}/api/whoami`, 'GET', { token });
      expect(answer.status, role).toBe(200);
      expect(answer.body.role).toBe(role === 'bootstrap' ? 'admin' : role);
      if (GRANTS[role]) expect([...answer.body.permissions].sort()).toEqual([...GRANTS[role]!].sort());
    }
    const viewer = await adminCall(`${harness.url}/api/whoami`, 'GET', { token: harness.tokens.viewer });
    expect(viewer.body).toMatchObject({ kind: 'token', team_scoped: false });
    expect(viewer.body.permissions).not.toContain('secrets:read');
    const developer = await adminCall(`${harness.url}/api/whoami`, 'GET', {
      token: harness.tokens.developer,
    });
    expect(developer.body).toMatchObject({ role: 'developer', team_scoped: true });
    expect((await adminCall(`${harness.url}/api/whoami`, 'GET')).status).toBe(401);
  });

  it('is a read only: a change is no open route (Viewer 403, Admin the 405)', async () => {
    const viewer = await adminCall(`${harness.url}/api/whoami`, 'POST', {
      token: harness.tokens.viewer,
      body: {},
    });
    expect(viewer.status).toBe(403);
    const admin = await adminCall(`${harness.url}/api/whoami`, 'POST', {
      token: harness.tokens.admin,
      body: {},
    });
    expect(admin.status).toBe(405);
  });
});

describe('upgrade requests (WebSocket routes under /api)', () => {
  const upgrade = (url: string, token?: string) =>
    harness.app.authorizeUpgrade({
      url,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    } as never);

  it('authenticates and checks the GET row of the path', async () => {
    await expect(upgrade('/api/config')).rejects.toMatchObject({ type: 'unauthorized' });
    await expect(upgrade('/api/config', harness.tokens.viewer)).resolves.toMatchObject({ roleId: 'viewer' });
    await expect(upgrade('/api/config', harness.tokens.developer)).rejects.toMatchObject({
      type: 'forbidden',
      code: 'missing_permission',
    });
    // The live tail is a logs read: Viewer and Developer (team-scoped) may, a role without logs:read may not.
    await expect(upgrade('/api/logs/stream', harness.tokens.viewer)).resolves.toMatchObject({
      roleId: 'viewer',
    });
    await expect(upgrade('/api/logs/stream', harness.tokens.developer)).resolves.toMatchObject({
      roleId: 'developer',
      teamScoped: true,
    });
    // No row: only Admin.
    await expect(upgrade('/api/no-such-socket', harness.tokens.viewer)).rejects.toMatchObject({
      type: 'forbidden',
    });
    await expect(upgrade('/api/no-such-socket', harness.tokens.admin)).resolves.toMatchObject({
      roleId: 'admin',
    });
  });

  it('takes the bearer token as the subprotocol gw-bearer.<base64url> when no Authorization header is sent', async () => {
    const viaProtocol = (url: string, token: string) =>
      harness.app.authorizeUpgrade({
        url,
        headers: {
          'sec-websocket-protocol': `gw-admin, gw-bearer.${Buffer.from(token).toString('base64url')}`,
        },
      } as never);
    await expect(viaProtocol('/api/logs/stream', harness.tokens.viewer)).resolves.toMatchObject({
      roleId: 'viewer',
    });
    await expect(viaProtocol('/api/config', harness.tokens.developer)).rejects.toMatchObject({
      type: 'forbidden',
    });
    await expect(viaProtocol('/api/logs/stream', 'not-a-token')).rejects.toMatchObject({
      type: 'unauthorized',
    });
  });
});
