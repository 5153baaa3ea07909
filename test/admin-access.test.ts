// Admin access (issue 18 items 2 and 3) in both modes, the cluster with two admin replicas: an admin API token
// made on one replica works on every replica, and once expired or revoked it is refused at once on every
// replica; custom roles and team scoping of virtual keys against the real governance service.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  untilClockPasses,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';

const ADMIN_TOKEN = 'access-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const UPSTREAM_KEY = 'sk-upstream-access-9876';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { admin: 2 }, readyTimeoutMs: 60_000 }),
  ],
] as const;

describe.each(MODES)('admin access (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  const on = (index: number, path: string) =>
    `${gateway.adminUrls[index % gateway.adminUrls.length]}/api${path}`;
  /** The status of a read with the token on every admin replica. */
  const statuses = async (token: string, path = '/config') =>
    Promise.all(gateway.adminUrls.map(async (url) => (await get(`${url}/api${path}`, bearer(token))).status));

  beforeAll(async () => {
    gateway = await start({
      providers: {
        openai: { keys: [{ value: UPSTREAM_KEY }], network_config: { base_url: 'http://127.0.0.1:9' } },
      },
    });
  }, scaled(60_000));
  afterAll(async () => gateway?.close());

  it('creates a token on one replica, uses it on every replica, and revokes it at once everywhere', async () => {
    const created = await call('POST', on(0, '/tokens'), { name: 'ops', role: 'admin' }, ADMIN);
    expect(created.status).toBe(201);
    const token: string = created.body.token;
    expect(await statuses(token)).toEqual(gateway.adminUrls.map(() => 200));
    const listed = await get(on(1, '/tokens'), ADMIN);
    expect(listed.body.find((entry: Json) => entry.id === created.body.id)).toMatchObject({ name: 'ops' });
    expect(JSON.stringify(listed.body)).not.toContain(token);
    await waitFor(async () => (await get(on(1, `/tokens/${created.body.id}`), ADMIN)).body.last_used_at);

    const revoked = await call('DELETE', on(1, `/tokens/${created.body.id}`), undefined, ADMIN);
    expect(revoked.status).toBe(200);
    expect(await statuses(token)).toEqual(gateway.adminUrls.map(() => 401));
  });

  it('refuses a token once it expired, on every replica', async () => {
    // Long enough for the reads before it to be made on a busy machine.
    const lifetimeSeconds = Math.ceil(scaled(1_000) / 1_000);
    const created = await call(
      'POST',
      on(0, '/tokens'),
      { name: 'brief', role: 'viewer', expires_in_seconds: lifetimeSeconds },
      ADMIN,
    );
    expect(await statuses(created.body.token)).toEqual(gateway.adminUrls.map(() => 200));
    await untilClockPasses(Date.parse(created.body.expires_at));
    const answers = await Promise.all(
      gateway.adminUrls.map((url) => get(`${url}/api/config`, bearer(created.body.token))),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toContain('expired');
    }
  });

  it('applies a custom role, and a change of it, on every replica', async () => {
    const role = await call(
      'POST',
      on(0, '/roles'),
      { id: 'config-editor', permissions: ['config:read', 'config:write'] },
      ADMIN,
    );
    expect(role.status).toBe(201);
    const token = (await call('POST', on(1, '/tokens'), { name: 'ce', role: 'config-editor' }, ADMIN)).body
      .token;
    expect(await statuses(token)).toEqual(gateway.adminUrls.map(() => 200));
    const denied = await get(on(1, '/providers'), bearer(token));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('providers:read');
    await call('PUT', on(1, '/roles/config-editor'), { permissions: ['providers:read'] }, ADMIN);
    expect(await statuses(token)).toEqual(gateway.adminUrls.map(() => 403));
    expect(await statuses(token, '/providers')).toEqual(gateway.adminUrls.map(() => 200));
  });

  it("keeps a Developer to their teams' virtual keys, and shows a Viewer no secrets", async () => {
    const team = async (name: string) =>
      (await call('POST', on(0, '/governance/teams'), { name }, ADMIN)).body.id;
    const mine = await team('access-a');
    const theirs = await team('access-b');
    const user = await call(
      'POST',
      on(0, '/users'),
      { email: 'dev@example.com', name: 'Dev', role: 'developer', team_ids: [mine] },
      ADMIN,
    );
    expect(user.status).toBe(201);
    const dev = (
      await call('POST', on(1, '/tokens'), { name: 'dev', role: 'developer', user_id: user.body.id }, ADMIN)
    ).body.token;
    const keys = on(1, '/governance/virtual-keys');
    const created = await call('POST', keys, { name: 'dev-key', team_id: mine }, bearer(dev));
    expect(created.status).toBe(201);
    expect(created.body.value).toMatch(/^sk-gw-/);
    const refused = await call('POST', keys, { name: 'dev-key', team_id: theirs }, bearer(dev));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain(`team_id: '${theirs}' is not one of your teams`);
    const other = await call('POST', keys, { name: 'other', team_id: theirs }, ADMIN);
    const edit = await call('PATCH', `${keys}/${other.body.id}`, { name: 'taken' }, bearer(dev));
    expect(edit.status).toBe(403);
    expect(edit.body.error.message).toContain(`belongs to team '${theirs}'`);
    const listed = await get(keys, bearer(dev));
    expect(listed.body.map((key: Json) => key.id)).toEqual([created.body.id]);
    expect((await call('PATCH', `${keys}/${created.body.id}`, { name: 'renamed' }, bearer(dev))).status).toBe(
      200,
    );
    // A Developer may not touch providers or make tokens.
    expect((await call('POST', on(0, '/tokens'), { name: 'x', role: 'admin' }, bearer(dev))).status).toBe(
      403,
    );

    const viewer = (await call('POST', on(0, '/tokens'), { name: 'v', role: 'viewer' }, ADMIN)).body.token;
    const providers = await get(on(1, '/providers'), bearer(viewer));
    expect(providers.status).toBe(200);
    expect(providers.body[0].keys[0].value).toBe('[redacted]');
    expect((await call('DELETE', on(1, '/providers/openai'), undefined, bearer(viewer))).status).toBe(403);
    // Deactivating the user refuses their token at once, everywhere.
    await call('PATCH', on(0, `/users/${user.body.id}`), { active: false }, ADMIN);
    expect(await statuses(dev, '/governance/virtual-keys')).toEqual(gateway.adminUrls.map(() => 401));
  });

  it('still refuses a caller without a credential with 401', async () => {
    for (const url of gateway.adminUrls) {
      const answer = await get(`${url}/api/users`);
      expect(answer.status).toBe(401);
      expect(answer.body.error.type).toBe('unauthorized');
    }
  });
});
