// The role matrix: every row of the permission table × every method it names × every role (and no credential),
// through the real express app. A module mounted without rows fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCall, startAdminHarness } from './admin-harness.ts';
import { BUILT_IN_ROLES, PERMISSIONS } from './permissions.ts';
import { OPEN_ROUTES, ROUTE_PERMISSIONS, routePermission } from './route-permissions.ts';

type Harness = Awaited<ReturnType<typeof startAdminHarness>>;
let harness: Harness;

beforeAll(async () => {
  harness = await startAdminHarness();
});
afterAll(async () => harness?.close());

const AUDITOR = ['config:read', 'providers:read', 'tokens:read'];
const GRANTS: Record<string, readonly string[]> = {
  ...Object.fromEntries(BUILT_IN_ROLES.map((role) => [role.id, role.permissions])),
  auditor: AUDITOR,
};

/** Every (method, concrete path, row) of the table; virtual keys are the developer's own (team-a). */
const CASES = ROUTE_PERMISSIONS.flatMap((row) => {
  const [methods = '', path = ''] = row.route.split(' ');
  const concrete = path.replace(/:id/g, 'key-a').replace(/:[a-z]+/g, 'x');
  return methods.split('|').map((method) => ({ method, path: concrete, row }));
});

describe('role matrix', () => {
  it('has permission rows for every mounted module, and only known permissions', () => {
    const covered = new Set(
      [...ROUTE_PERMISSIONS.map((row) => row.route), ...OPEN_ROUTES].map(
        (route) => route.split(' ')[1]!.split('/')[1],
      ),
    );
    const bare = harness.app.mounts.filter((mount) => !covered.has(mount));
    expect(bare, 'modules mounted without permission rows').toEqual([]);
    for (const row of ROUTE_PERMISSIONS) expect(PERMISSIONS).toContain(row.permission);
  });

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

  it('lets only Admin reach a method or path no row declares (the module answers its own 405 or 404)', async () => {
    expect(routePermission('OPTIONS', ['providers'])).toBeUndefined();
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
