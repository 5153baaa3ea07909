// Owner checks of team-scoped roles (issue 25 defect 6): a Developer charged its keys to any customer by naming
// `customer_id` (or `business_unit_id`, `user_id`) of another owner. Every owner id a team-scoped role writes
// must be one its teams reach: a customer or business unit that owns one of its teams, a user of one of its
// teams. Both modes, against the real governance service.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Json } from './support/http.ts';

const ADMIN_TOKEN = 'owner-scope-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 }),
  ],
] as const;

function expectOutside(answer: { status: number; body: Json }, field: string, text: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403);
  expect(answer.body.error.code).toBe('team_scope');
  expect(answer.body.error.param).toBe(field);
  expect(answer.body.error.message).toContain(`${field}: '${text}'`);
}

describe.each(MODES)('owner checks of team-scoped roles (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  const api = (path: string) => `${gateway.adminUrl}/api${path}`;
  const create = async (collection: string, body: Json) => {
    const answer = await call('POST', api(`/governance/${collection}`), body, ADMIN);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.id as string;
  };
  /** A token of `role` acting for a new user of `teams`. */
  const tokenFor = async (role: string, teams: string[]) => {
    const email = `${role}-${teams.join('-')}@example.com`;
    const user = await call('POST', api('/users'), { email, name: role, role, team_ids: teams }, ADMIN);
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const token = await call('POST', api('/tokens'), { name: role, role, user_id: user.body.id }, ADMIN);
    return bearer(token.body.token);
  };
  let owners: Record<string, string>;

  beforeAll(async () => {
    gateway = await start({});
    const customerA = await create('customers', { name: 'customer-a' });
    const customerB = await create('customers', { name: 'customer-b' });
    const unitA = await create('business-units', { name: 'unit-a' });
    const unitB = await create('business-units', { name: 'unit-b' });
    const teamA = await create('teams', { name: 'team-a', customer_id: customerA, business_unit_id: unitA });
    const teamB = await create('teams', { name: 'team-b', customer_id: customerB, business_unit_id: unitB });
    const userA = await create('users', { name: 'user-a', team_id: teamA });
    const userB = await create('users', { name: 'user-b', team_id: teamB });
    owners = { customerA, customerB, unitA, unitB, teamA, teamB, userA, userB };
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it("refuses a Developer's key another team's customer, business unit or user, on create and change", async () => {
    const dev = await tokenFor('developer', [owners.teamA!]);
    const keys = api('/governance/virtual-keys');
    const key = (extra: Json) => ({ name: 'dev-key', team_id: owners.teamA, ...extra });
    expectOutside(
      await call('POST', keys, key({ customer_id: owners.customerB }), dev),
      'customer_id',
      owners.customerB!,
    );
    expectOutside(
      await call('POST', keys, key({ business_unit_id: owners.unitB }), dev),
      'business_unit_id',
      owners.unitB!,
    );
    expectOutside(await call('POST', keys, key({ user_id: owners.userB }), dev), 'user_id', owners.userB!);
    const mine = await call(
      'POST',
      keys,
      key({ customer_id: owners.customerA, business_unit_id: owners.unitA, user_id: owners.userA }),
      dev,
    );
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    const id = mine.body.id;
    expectOutside(
      await call('PATCH', `${keys}/${id}`, { customer_id: owners.customerB }, dev),
      'customer_id',
      owners.customerB!,
    );
    const whole = { ...key({ customer_id: owners.customerB }), provider_configs: [] };
    expectOutside(await call('PUT', `${keys}/${id}`, whole, dev), 'customer_id', owners.customerB!);
    expect((await call('GET', `${keys}/${id}`, undefined, ADMIN)).body.customer_id).toBe(owners.customerA);
    // What the key already has stays writable, as Admin set it: a read sent back is no change of owner.
    expect((await call('PATCH', `${keys}/${id}`, { customer_id: owners.customerB }, ADMIN)).status).toBe(200);
    expect(
      (await call('PATCH', `${keys}/${id}`, { name: 'renamed', customer_id: owners.customerB }, dev)).status,
    ).toBe(200);
  });

  it('keeps a team-scoped custom role to its own teams, customers, business units and users', async () => {
    const role = await call(
      'POST',
      api('/roles'),
      {
        id: 'team-owner',
        team_scoped: true,
        permissions: ['teams:read', 'teams:write', 'customers:read', 'customers:write'],
      },
      ADMIN,
    );
    expect(role.status, JSON.stringify(role.body)).toBe(201);
    const scoped = await tokenFor('team-owner', [owners.teamA!]);
    const path = (collection: string, id = '') => api(`/governance/${collection}${id ? `/${id}` : ''}`);
    expectOutside(
      await call('PATCH', path('teams', owners.teamA), { customer_id: owners.customerB }, scoped),
      'customer_id',
      owners.customerB!,
    );
    const budget = { budget: { max_limit: 1, reset_duration: '1d' } };
    for (const [collection, id] of [
      ['teams', owners.teamB],
      ['customers', owners.customerB],
      ['business-units', owners.unitB],
      ['users', owners.userB],
    ] as const) {
      const answer = await call('PATCH', path(collection, id), budget, scoped);
      expect(answer.status, `${collection} ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.error.code).toBe('team_scope');
      expect((await call('DELETE', path(collection, id), undefined, scoped)).status).toBe(403);
    }
    expectOutside(
      await call('POST', path('users'), { name: 'u', team_id: owners.teamB }, scoped),
      'team_id',
      owners.teamB!,
    );
    expectOutside(
      await call('POST', path('teams'), { name: 't', customer_id: owners.customerB }, scoped),
      'customer_id',
      owners.customerB!,
    );
    for (const [collection, id] of [
      ['teams', owners.teamA],
      ['customers', owners.customerA],
      ['business-units', owners.unitA],
      ['users', owners.userA],
    ] as const) {
      const answer = await call('PATCH', path(collection, id), budget, scoped);
      expect(answer.status, `${collection} ${JSON.stringify(answer.body)}`).toBe(200);
    }
  });
  it('keeps a team-scoped role with users, tokens and roles permissions to its teams and team-scoped roles', async () => {
    const permissions = [
      'users:read',
      'users:write',
      'tokens:read',
      'tokens:write',
      'roles:read',
      'roles:write',
      'keys:read',
    ];
    const created = await call(
      'POST',
      api('/roles'),
      { id: 'team-admin', team_scoped: true, permissions },
      ADMIN,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const wide = await call(
      'POST',
      api('/roles'),
      { id: 'keys-everywhere', permissions: ['keys:read'] },
      ADMIN,
    );
    expect(wide.status).toBe(201);
    const scoped = await tokenFor('team-admin', [owners.teamA!]);
    const person = (email: string, role: string, teams: string[]) => ({
      email,
      name: email,
      role,
      team_ids: teams,
    });
    const outsider = await call(
      'POST',
      api('/users'),
      person('b@example.com', 'team-admin', [owners.teamB!]),
      scoped,
    );
    expect(outsider.status, JSON.stringify(outsider.body)).toBe(403);
    expect(outsider.body.error).toMatchObject({ code: 'team_scope', param: 'team_ids[0]' });
    const wider = await call(
      'POST',
      api('/users'),
      person('w@example.com', 'keys-everywhere', [owners.teamA!]),
      scoped,
    );
    expect(wider.status, JSON.stringify(wider.body)).toBe(403);
    expect(wider.body.error).toMatchObject({ code: 'team_scope', param: 'roles[0]' });
    const role = await call('POST', api('/roles'), { id: 'wide-too', permissions: ['keys:read'] }, scoped);
    expect(role.status, JSON.stringify(role.body)).toBe(403);
    expect(role.body.error).toMatchObject({ code: 'team_scope', param: 'team_scoped' });
    // Someone of team B: not to be changed, deleted or given a token by team A's administrator.
    const other = await call(
      'POST',
      api('/users'),
      person('o@example.com', 'team-admin', [owners.teamB!]),
      ADMIN,
    );
    expect(other.status).toBe(201);
    for (const [method, body] of [
      ['PATCH', { name: 'taken' }],
      ['DELETE', undefined],
    ] as const) {
      const answer = await call(method, api(`/users/${other.body.id}`), body, scoped);
      expect(answer.status, `${method} ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.error.code).toBe('team_scope');
    }
    const token = await call(
      'POST',
      api('/tokens'),
      { name: 't', role: 'team-admin', user_id: other.body.id },
      scoped,
    );
    expect(token.status, JSON.stringify(token.body)).toBe(403);
    expect(token.body.error.code).toBe('team_scope');
    const mine = await call(
      'POST',
      api('/users'),
      person('a@example.com', 'team-admin', [owners.teamA!]),
      scoped,
    );
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    const own = await call(
      'POST',
      api('/tokens'),
      { name: 't', role: 'team-admin', user_id: mine.body.id },
      scoped,
    );
    expect(own.status, JSON.stringify(own.body)).toBe(201);
  });

  it("lists and revokes only the team-scoped tokens of its teams' people, never an Admin's (issue 42)", async () => {
    const role = await call(
      'POST',
      api('/roles'),
      { id: 'token-keeper', team_scoped: true, permissions: ['tokens:read', 'tokens:write'] },
      ADMIN,
    );
    expect(role.status, JSON.stringify(role.body)).toBe(201);
    const keeper = await tokenFor('token-keeper', [owners.teamA!]);
    const made = async (body: Json) => {
      const answer = await call('POST', api('/tokens'), body, ADMIN);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return { id: answer.body.id as string, headers: bearer(answer.body.token) };
    };
    const admin = await made({ name: 'ops', role: 'admin' });
    const mate = await call(
      'POST',
      api('/users'),
      { email: 'mate@example.com', name: 'mate', role: 'developer', team_ids: [owners.teamA] },
      ADMIN,
    );
    const teamMate = await made({ name: 'mate', role: 'developer', user_id: mate.body.id });

    const ids = (await call('GET', api('/tokens'), undefined, keeper)).body.map((token: Json) => token.id);
    expect(ids).toContain(teamMate.id);
    expect(ids).not.toContain(admin.id);
    const refused = await call('DELETE', api(`/tokens/${admin.id}`), undefined, keeper);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'team_scope', param: 'id' });
    expect((await call('GET', api(`/tokens/${admin.id}`), undefined, keeper)).status).toBe(403);
    // The Admin's token still works, the keeper's too.
    expect((await call('GET', api('/config'), undefined, admin.headers)).status).toBe(200);
    expect((await call('GET', api('/tokens'), undefined, keeper)).status).toBe(200);
    expect((await call('DELETE', api(`/tokens/${teamMate.id}`), undefined, keeper)).status).toBe(200);
    expect((await call('GET', api('/keys'), undefined, teamMate.headers)).status).toBe(401);
  });
});
