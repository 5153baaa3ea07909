// Identities and RBAC through the express app: tokens (shown once, hashed, expiring, revoked), users, custom
// roles, team scoping of virtual keys and the Viewer's redaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCall, BOOTSTRAP_TOKEN, startAdminHarness } from '../../testing/admin-harness.ts';

type Harness = Awaited<ReturnType<typeof startAdminHarness>>;
let harness: Harness;

beforeAll(async () => {
  harness = await startAdminHarness();
});
afterAll(async () => harness?.close());

const api = (path: string) => `${harness.url}/api${path}`;
const asAdmin = (method: string, path: string, body?: unknown) =>
  adminCall(api(path), method, { token: BOOTSTRAP_TOKEN, body });

describe('admin API tokens', () => {
  it('shows a value once, stores only its hash, and answers for its role', async () => {
    const created = await asAdmin('POST', '/tokens', { name: 'ci', role: 'viewer' });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^gwat_/);
    expect(created.body).toMatchObject({ name: 'ci', role: 'viewer', created_by: 'bootstrap' });
    const listed = await asAdmin('GET', '/tokens');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    const read = await adminCall(api('/providers'), 'GET', { token: created.body.token });
    expect(read.status).toBe(200);
    const write = await adminCall(api('/providers'), 'POST', {
      token: created.body.token,
      body: { name: 'x' },
    });
    expect(write.status).toBe(403);
    expect(write.body.error.message).toContain('providers:write');
    const one = await asAdmin('GET', `/tokens/${created.body.id}`);
    expect(one.body.last_used_at).toEqual(expect.any(String));
  });

  it('refuses an expired token with 401', async () => {
    const created = await asAdmin('POST', '/tokens', { name: 'short', role: 'admin', expires_in_seconds: 1 });
    expect((await adminCall(api('/config'), 'GET', { token: created.body.token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const expired = await adminCall(api('/config'), 'GET', { token: created.body.token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toContain('expired');
  });

  it('refuses a revoked token at once', async () => {
    const created = await asAdmin('POST', '/tokens', { name: 'gone', role: 'admin' });
    expect((await adminCall(api('/config'), 'GET', { token: created.body.token })).status).toBe(200);
    expect((await asAdmin('DELETE', `/tokens/${created.body.id}`)).body).toEqual({
      revoked: created.body.id,
    });
    expect((await adminCall(api('/config'), 'GET', { token: created.body.token })).status).toBe(401);
    expect((await asAdmin('DELETE', `/tokens/${created.body.id}`)).status).toBe(404);
  });

  it.each([
    [{ role: 'viewer' }, 'name'],
    [{ name: 'x', role: 'nobody' }, 'role'],
    [{ name: 'x', role: 'viewer', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'x', role: 'developer' }, 'user_id'],
    [{ name: 'x', role: 'viewer', user_id: 'dev' }, 'role'],
    [{ name: 'x', role: 'viewer', colour: 'red' }, 'colour'],
  ])('refuses %j with a 400 naming %s', async (body, field) => {
    const answer = await asAdmin('POST', '/tokens', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain(field);
  });

  it('refuses a token of a deactivated user, and works again when reactivated', async () => {
    const created = await asAdmin('POST', '/tokens', { name: 'dev', role: 'developer', user_id: 'dev' });
    expect((await adminCall(api('/keys'), 'GET', { token: created.body.token })).status).toBe(200);
    await asAdmin('PATCH', '/users/dev', { active: false });
    expect((await adminCall(api('/keys'), 'GET', { token: created.body.token })).status).toBe(401);
    await asAdmin('PATCH', '/users/dev', { active: true });
    expect((await adminCall(api('/keys'), 'GET', { token: created.body.token })).status).toBe(200);
  });
});

describe('users and roles', () => {
  it('creates, reads, changes and deletes a user; the email is unique and fields are checked', async () => {
    const created = await asAdmin('POST', '/users', {
      email: 'Ann@Example.com',
      name: 'Ann',
      role: 'viewer',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'ann@example.com',
      roles: ['viewer'],
      active: true,
      team_ids: [],
    });
    expect(
      (await asAdmin('POST', '/users', { email: 'ann@example.com', name: 'A', role: 'viewer' })).status,
    ).toBe(409);
    const bad = await asAdmin('POST', '/users', { email: 'not-an-email', name: 'A', role: 'viewer' });
    expect(bad.body.error.message).toContain('email');
    const noRole = await asAdmin('POST', '/users', { email: 'b@example.com', name: 'B', roles: ['ghost'] });
    expect(noRole.body.error.message).toContain('roles[0]');
    const noTeam = await asAdmin('PATCH', `/users/${created.body.id}`, { team_ids: ['team-a', 'team-z'] });
    expect(noTeam.status).toBe(400);
    expect(noTeam.body.error.message).toContain("team_ids[1]: no team 'team-z' exists");
    const patched = await asAdmin('PATCH', `/users/${created.body.id}`, { team_ids: ['team-a'] });
    expect(patched.body).toMatchObject({ roles: ['viewer'], team_ids: ['team-a'] });
    const partial = await asAdmin('PUT', `/users/${created.body.id}`, { name: 'Ann B' });
    expect(partial.status).toBe(400);
    expect(partial.body.error.message).toContain('email');
    const replaced = await asAdmin('PUT', `/users/${created.body.id}`, {
      email: 'ann@example.com',
      name: 'Ann B',
      roles: ['viewer'],
    });
    expect(replaced.body).toMatchObject({ id: created.body.id, name: 'Ann B', team_ids: [] });
    expect((await asAdmin('DELETE', `/users/${created.body.id}`)).status).toBe(200);
    expect((await asAdmin('GET', `/users/${created.body.id}`)).status).toBe(404);
  });

  it('makes custom roles from known permissions only, and keeps built-in roles as they are', async () => {
    const unknown = await asAdmin('POST', '/roles', {
      id: 'ops',
      permissions: ['config:read', 'config:delete'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("permissions[1]: 'config:delete' is not a permission");
    const created = await asAdmin('POST', '/roles', {
      id: 'ops',
      permissions: ['config:read', 'config:write'],
    });
    expect(created.status).toBe(201);
    const token = (await asAdmin('POST', '/tokens', { name: 'ops', role: 'ops' })).body;
    expect((await adminCall(api('/config'), 'PUT', { token: token.token, body: {} })).status).toBe(200);
    expect((await adminCall(api('/providers'), 'GET', { token: token.token })).status).toBe(403);
    // A role still held cannot go; changing it applies at the next request.
    expect((await asAdmin('DELETE', '/roles/ops')).status).toBe(409);
    await asAdmin('PUT', '/roles/ops', { permissions: ['config:read'] });
    expect((await adminCall(api('/config'), 'PUT', { token: token.token, body: {} })).status).toBe(403);
    const patched = await asAdmin('PATCH', '/roles/ops', { description: 'reads config' });
    expect(patched.body).toMatchObject({ permissions: ['config:read'], description: 'reads config' });
    expect((await asAdmin('PUT', '/roles/admin', { permissions: [] })).status).toBe(400);
    const roles = await asAdmin('GET', '/roles');
    expect(roles.body.map((role: { id: string }) => role.id)).toEqual(
      expect.arrayContaining(['admin', 'developer', 'viewer', 'ops']),
    );
  });

  it('lets nobody hand out more than they hold', async () => {
    await asAdmin('POST', '/roles', { id: 'token-minter', permissions: ['tokens:write', 'tokens:read'] });
    const minter = (await asAdmin('POST', '/tokens', { name: 'm', role: 'token-minter' })).body.token;
    const escalated = await adminCall(api('/tokens'), 'POST', {
      token: minter,
      body: { name: 'x', role: 'admin' },
    });
    expect(escalated.status).toBe(403);
    expect(escalated.body.error.message).toContain("role 'admin' grants");
    const same = await adminCall(api('/tokens'), 'POST', {
      token: minter,
      body: { name: 'x', role: 'token-minter' },
    });
    expect(same.status).toBe(201);
  });
});

describe('team scoping and redaction', () => {
  const developer = (method: string, path: string, body?: unknown) =>
    adminCall(api(path), method, { token: harness.tokens.developer, body });

  it("lists only the developer's team's keys, and refuses another team's with a clear 403", async () => {
    const listed = await developer('GET', '/governance/virtual-keys');
    expect(listed.body.map((key: { id: string }) => key.id)).toEqual(['key-a']);
    const other = await developer('PATCH', '/governance/virtual-keys/key-b', { name: 'mine now' });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: 'team_scope', param: 'team_id' });
    expect(other.body.error.message).toContain("virtual key key-b belongs to team 'team-b'");
    expect((await developer('GET', '/governance/virtual-keys/key-b')).status).toBe(403);
    expect((await developer('DELETE', '/keys/key-b')).status).toBe(403);
    expect((await developer('POST', '/governance/virtual-keys/key-b/rotate')).status).toBe(403);
    expect((await developer('PATCH', '/governance/virtual-keys/key-a', { name: 'ok' })).status).toBe(200);
    const moved = await developer('PATCH', '/governance/virtual-keys/key-a', { team_id: 'team-b' });
    expect(moved.status).toBe(403);
    expect(moved.body.error.message).toContain("team_id: 'team-b' is not one of your teams");
  });

  it('creates keys in the developer’s teams only', async () => {
    const mine = await developer('POST', '/governance/virtual-keys', { name: 'k', team_id: 'team-a' });
    expect(mine.status).toBe(201);
    const theirs = await developer('POST', '/governance/virtual-keys', { name: 'k', team_id: 'team-b' });
    expect(theirs.status).toBe(403);
    expect(theirs.body.error.message).toContain(
      "team_id: 'team-b' is not one of your teams; role developer acts on virtual keys of its teams only (yours: team-a)",
    );
    const none = await developer('POST', '/governance/virtual-keys', { name: 'k' });
    expect(none.body.error.message).toContain('team_id: is required');
    expect((await developer('POST', '/keys', { name: 'k' })).status).toBe(403);
  });

  it('redacts secret fields for a Viewer, not for Admin', async () => {
    const viewer = await adminCall(api('/governance/virtual-keys'), 'GET', { token: harness.tokens.viewer });
    expect(JSON.stringify(viewer.body)).not.toContain('sk-gw-');
    expect(viewer.body[0].value).toBe('[redacted]');
    const providers = await adminCall(api('/providers'), 'GET', { token: harness.tokens.viewer });
    expect(providers.body[0].keys[0].value).toBe('[redacted]');
    const admin = await asAdmin('GET', '/governance/virtual-keys');
    expect(admin.body[0].value).toContain('sk-gw-');
  });
});

describe('tokens of a team-scoped role (issue 42, defect 1)', () => {
  it("sees and revokes only the team-scoped tokens of its teams' people, never an Admin's", async () => {
    await harness.identities.putRole({
      id: 'team-tokens',
      name: 'Team tokens',
      description: '',
      permissions: ['tokens:read', 'tokens:write'],
      team_scoped: true,
      built_in: false,
    });
    await harness.identities.putUser({
      id: 'keeper',
      email: 'keeper@example.com',
      name: 'Keeper',
      roles: ['team-tokens', 'admin'],
      team_ids: ['team-a'],
      active: true,
      created_at: '',
      updated_at: '',
    });
    await harness.identities.putUser({
      id: 'dev-b',
      email: 'dev-b@example.com',
      name: 'Dev B',
      roles: ['developer'],
      team_ids: ['team-a', 'team-b'],
      active: true,
      created_at: '',
      updated_at: '',
    });
    const made = async (role: string, userId?: string) =>
      harness.identities.createToken({
        name: `${role}-${userId ?? 'nobody'}`,
        role,
        created_by: 'test',
        ...(userId !== undefined && { user_id: userId }),
      });
    const keeper = await made('team-tokens', 'keeper');
    const keepersAdmin = await made('admin', 'keeper');
    const teamMate = await made('developer', 'dev');
    const straddler = await made('developer', 'dev-b');
    const admin = await made('admin');
    const asKeeper = (method: string, path: string) => adminCall(api(path), method, { token: keeper.value });

    const listed = await asKeeper('GET', '/tokens');
    expect(listed.status).toBe(200);
    const ids = listed.body.map((token: { id: string }) => token.id);
    expect(ids).toEqual(expect.arrayContaining([keeper.token.id, teamMate.token.id]));
    for (const hidden of [keepersAdmin, straddler, admin]) expect(ids).not.toContain(hidden.token.id);
    expect(ids).not.toContain(
      (await harness.identities.listTokens()).find((token) => token.role === 'viewer')?.id,
    );

    for (const other of [admin, keepersAdmin, straddler]) {
      const read = await asKeeper('GET', `/tokens/${other.token.id}`);
      expect(read.status).toBe(403);
      expect(read.body.error.code).toBe('team_scope');
      const revoked = await asKeeper('DELETE', `/tokens/${other.token.id}`);
      expect(revoked.status).toBe(403);
      expect(revoked.body.error).toMatchObject({ code: 'team_scope', param: 'id' });
      expect(revoked.body.error.message).toContain(`token ${other.token.id}`);
      expect((await adminCall(api('/tokens'), 'GET', { token: other.value })).status).not.toBe(401);
    }
    expect((await asKeeper('GET', `/tokens/${teamMate.token.id}`)).status).toBe(200);
    expect((await asKeeper('DELETE', `/tokens/${teamMate.token.id}`)).body).toEqual({
      revoked: teamMate.token.id,
    });
    expect((await adminCall(api('/keys'), 'GET', { token: teamMate.value })).status).toBe(401);
    // Unknown stays a 404, as for anyone.
    expect((await asKeeper('DELETE', '/tokens/tok_nothing')).status).toBe(404);
  });
});

describe('anonymous access', () => {
  it('is possible only where the operator opened the API; a token still acts as its role there', async () => {
    const open = await startAdminHarness({ allowAnonymous: true });
    try {
      expect((await adminCall(`${open.url}/api/config`, 'GET')).status).toBe(200);
      expect((await adminCall(`${open.url}/api/config`, 'GET', { token: 'unknown' })).status).toBe(200);
      const viewer = await adminCall(`${open.url}/api/config`, 'PUT', {
        token: open.tokens.viewer,
        body: {},
      });
      expect(viewer.status).toBe(403);
    } finally {
      await open.close();
    }
    expect((await adminCall(`${harness.url}/api/config`, 'GET')).status).toBe(401);
  });

  it('is ambient like a cookie: a page of another origin may not use it (issue 25, defect 4)', async () => {
    const open = await startAdminHarness({ allowAnonymous: true });
    try {
      const call = (method: string, origin?: string) =>
        fetch(`${open.url}/api/providers`, {
          method,
          headers: { 'content-type': 'application/json', ...(origin && { origin }) },
          ...(method === 'POST' && { body: JSON.stringify({ name: 'from-a-page' }) }),
        });
      const read = await call('GET', 'http://evil.example');
      expect(read.status).toBe(403);
      expect(((await read.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
      expect((await call('POST', 'http://evil.example')).status).toBe(403);
      expect((await call('GET', open.url)).status).toBe(200);
      expect((await call('GET')).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
