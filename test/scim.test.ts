// SCIM 2.0 provisioning (issue 18 item 5, docs/scim.md) in both modes, the cluster with two admin replicas
// (a write on one is read on the other): the sequences Okta and Microsoft Entra ID send, roles following group
// names through auth.role_mappings, and deprovisioning that refuses a user's API token at once on every admin
// replica. The SCIM token opens SCIM only, and no /api credential opens SCIM.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';

const ADMIN_TOKEN = 'scim-test-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SCIM_TOKEN = 'scim-test-token-7f3a9c1e5b2d4f60';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const CONFIG: GatewayConfigInput = {
  auth: {
    role_mappings: [
      { value: 'gw-admins', role: 'admin' },
      { value: 'gw-viewers', role: 'viewer' },
    ],
  },
};

const MODES = [
  [
    'embedded',
    (options: { scim: boolean }) =>
      startEmbedded({
        config: CONFIG,
        adminToken: ADMIN_TOKEN,
        ...(options.scim && { scimToken: SCIM_TOKEN }),
      }),
  ],
  [
    'cluster',
    (options: { scim: boolean }) =>
      startCluster({
        config: CONFIG,
        adminToken: ADMIN_TOKEN,
        ...(options.scim && { env: { GW_SCIM_TOKEN: SCIM_TOKEN }, replicas: { admin: 2 } }),
        readyTimeoutMs: 60_000,
      }),
  ],
] as const;

/** A SCIM call as an identity provider makes it (its bearer token, application/scim+json). */
async function scim(url: string, method: string, body?: unknown, token = SCIM_TOKEN) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/scim+json', authorization: `Bearer ${token}` },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(scaled(10_000)),
  });
  const text = await response.text();
  const json: Json = text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body: json };
}

const filter = (expression: string) => `filter=${encodeURIComponent(expression)}`;
const patchBody = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations });

describe.each(MODES)('SCIM provisioning (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  /** `/scim/v2<path>` on an admin replica (the cluster has two). */
  const at = (replica: number, path: string) =>
    `${gateway.adminUrls[replica % gateway.adminUrls.length]}/scim/v2${path}`;
  const api = (replica: number, path: string) =>
    `${gateway.adminUrls[replica % gateway.adminUrls.length]}/api${path}`;
  /** The admin user behind a SCIM user, read through /api on a replica. */
  const adminUser = async (replica: number, id: string) =>
    (await get(api(replica, `/users/${id}`), ADMIN)).body;

  beforeAll(async () => {
    gateway = await start({ scim: true });
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('runs the sequence Okta sends: match, create, update, push a group, deactivate', async () => {
    const userName = 'okta.user@example.com';
    const search = await scim(
      at(0, `/Users?${filter(`userName eq "${userName}"`)}&startIndex=1&count=100`),
      'GET',
    );
    expect(search.status).toBe(200);
    expect(search.headers.get('content-type')).toContain('application/scim+json');
    expect(search.body).toMatchObject({ totalResults: 0, Resources: [] });

    const created = await scim(at(1, '/Users'), 'POST', {
      schemas: [USER_SCHEMA],
      userName,
      name: { givenName: 'Okta', familyName: 'User' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      displayName: 'Okta User',
      locale: 'en-US',
      externalId: '00u1abcd',
      groups: [],
      password: 'never-kept-Secret1',
      active: true,
    });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(created.body).toMatchObject({ userName, active: true, externalId: '00u1abcd', locale: 'en-US' });
    expect(JSON.stringify(created.body)).not.toContain('never-kept');
    expect((await scim(at(0, `/Users/${id}`), 'GET')).body).toMatchObject({ id, displayName: 'Okta User' });
    expect(await adminUser(0, id)).toMatchObject({
      email: userName,
      source: 'scim',
      roles: [],
      active: true,
    });

    const updated = await scim(at(0, `/Users/${id}`), 'PUT', {
      ...created.body,
      name: { givenName: 'Okta', familyName: 'Renamed' },
      displayName: 'Okta Renamed',
    });
    expect(updated.status).toBe(200);
    expect((await adminUser(1, id)).name).toBe('Okta Renamed');

    expect(
      (await scim(at(1, `/Groups?${filter('displayName eq "gw-admins"')}&startIndex=1&count=100`), 'GET'))
        .body.totalResults,
    ).toBe(0);
    const group = await scim(at(1, '/Groups'), 'POST', {
      schemas: [GROUP_SCHEMA],
      displayName: 'gw-admins',
      members: [],
    });
    expect(group.status).toBe(201);
    const groupId: string = group.body.id;
    const added = await scim(
      at(0, `/Groups/${groupId}`),
      'PATCH',
      patchBody({ op: 'add', path: 'members', value: [{ value: id, display: userName }] }),
    );
    expect(added.status).toBe(200);
    expect(added.body.members).toEqual([expect.objectContaining({ value: id })]);
    expect((await adminUser(1, id)).roles).toEqual(['admin']);
    // Okta's rename: replace without a path, the group's id in the value.
    await scim(
      at(1, `/Groups/${groupId}`),
      'PATCH',
      patchBody({ op: 'replace', value: { id: groupId, displayName: 'gw-viewers' } }),
    );
    expect((await adminUser(0, id)).roles).toEqual(['viewer']);
    await scim(
      at(0, `/Groups/${groupId}`),
      'PATCH',
      patchBody({ op: 'remove', path: `members[value eq "${id}"]` }),
    );
    expect((await adminUser(1, id)).roles).toEqual([]);

    const deactivated = await scim(
      at(1, `/Users/${id}`),
      'PATCH',
      patchBody({ op: 'replace', value: { active: false } }),
    );
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect((await adminUser(0, id)).active).toBe(false);
    expect((await scim(at(0, `/Groups/${groupId}`), 'DELETE')).status).toBe(204);
    expect((await scim(at(1, `/Groups/${groupId}`), 'GET')).status).toBe(404);
  });

  it('runs the sequence Microsoft Entra ID sends: Replace, "False", value paths, member batches, delete', async () => {
    const userName = 'entra.user@contoso.example';
    expect(
      (await scim(at(0, `/Users?${filter(`userName eq "${userName}"`)}`), 'GET')).body.totalResults,
    ).toBe(0);
    const created = await scim(at(0, '/Users'), 'POST', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      externalId: '8b1f6c1e-entra',
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: userName }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Entra User', familyName: 'User', givenName: 'Entra' },
      roles: [],
      [ENTERPRISE]: { department: 'Research', manager: { value: 'someone' } },
    });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(created.body[ENTERPRISE]).toEqual({ department: 'Research', manager: { value: 'someone' } });

    const byName = await scim(at(1, `/Users?${filter(`userName eq "${userName}"`)}`), 'GET');
    expect(byName.body.Resources.map((user: Json) => user.id)).toEqual([id]);
    const byEmail = await scim(
      at(1, `/Users?${filter(`emails[type eq "work"].value eq "${userName}"`)}`),
      'GET',
    );
    expect(byEmail.body.totalResults).toBe(1);

    const patched = await scim(
      at(1, `/Users/${id}`),
      'PATCH',
      patchBody(
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'entra.moved@contoso.example' },
        { op: 'Replace', path: 'name.familyName', value: 'Moved' },
        { op: 'Add', path: `${ENTERPRISE}:employeeNumber`, value: '1234' },
      ),
    );
    expect(patched.status).toBe(200);
    expect(patched.body.emails).toEqual([
      { primary: true, type: 'work', value: 'entra.moved@contoso.example' },
    ]);
    expect(patched.body.name).toMatchObject({ familyName: 'Moved', givenName: 'Entra' });

    const other = (
      await scim(at(0, '/Users'), 'POST', {
        schemas: [USER_SCHEMA],
        userName: 'entra.other@contoso.example',
        active: true,
      })
    ).body.id;
    const group = await scim(at(0, '/Groups'), 'POST', {
      schemas: [GROUP_SCHEMA, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
      externalId: '60f1-entra-group',
      displayName: 'gw-viewers',
      meta: { resourceType: 'Group' },
    });
    expect(group.status).toBe(201);
    const groupId: string = group.body.id;
    const found = await scim(
      at(1, `/Groups?excludedAttributes=members&${filter('displayName eq "gw-viewers"')}`),
      'GET',
    );
    expect(found.body.Resources).toEqual([
      expect.objectContaining({ id: groupId, displayName: 'gw-viewers' }),
    ]);
    expect(found.body.Resources[0].members).toBeUndefined();

    await scim(
      at(1, `/Groups/${groupId}`),
      'PATCH',
      patchBody({
        op: 'Add',
        path: 'members',
        value: [
          { $ref: null, value: id },
          { $ref: null, value: other },
        ],
      }),
    );
    expect((await adminUser(0, id)).roles).toEqual(['viewer']);
    expect((await adminUser(0, other)).roles).toEqual(['viewer']);
    // Entra's removal: path "members", the members to remove as value; and one by value path.
    await scim(
      at(0, `/Groups/${groupId}`),
      'PATCH',
      patchBody({ op: 'Remove', path: 'members', value: [{ $ref: null, value: other }] }),
    );
    expect((await adminUser(1, other)).roles).toEqual([]);
    expect((await adminUser(1, id)).roles).toEqual(['viewer']);
    await scim(
      at(1, `/Groups/${groupId}`),
      'PATCH',
      patchBody({ op: 'Remove', path: `members[value eq "${id}"]` }),
    );
    expect((await scim(at(0, `/Groups/${groupId}`), 'GET')).body.members).toEqual([]);
    expect((await adminUser(0, id)).roles).toEqual([]);

    const disabled = await scim(
      at(0, `/Users/${id}`),
      'PATCH',
      patchBody({ op: 'Replace', path: 'active', value: 'False' }),
    );
    expect(disabled.status).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await adminUser(1, id)).active).toBe(false);

    expect((await scim(at(1, `/Users/${id}`), 'DELETE')).status).toBe(204);
    for (const replica of gateway.adminUrls.keys()) {
      expect((await scim(at(replica, `/Users/${id}`), 'GET')).status).toBe(404);
      expect((await get(api(replica, `/users/${id}`), ADMIN)).status).toBe(404);
    }
    expect((await scim(at(0, `/Groups/${groupId}`), 'DELETE')).status).toBe(204);
  });

  it('refuses a deprovisioned user’s API token at once on every admin replica', async () => {
    const user = await scim(at(0, '/Users'), 'POST', {
      schemas: [USER_SCHEMA],
      userName: 'deprovisioned@example.com',
    });
    const id: string = user.body.id;
    const group = await scim(at(1, '/Groups'), 'POST', {
      displayName: 'gw-admins',
      members: [{ value: id }],
    });
    expect(group.status).toBe(201);
    const token = await call('POST', api(0, '/tokens'), { name: 'ops', role: 'admin', user_id: id }, ADMIN);
    expect(token.status).toBe(201);
    const statuses = async () =>
      Promise.all(
        gateway.adminUrls.map(
          async (url) => (await get(`${url}/api/config`, bearer(token.body.token))).status,
        ),
      );
    expect(await statuses()).toEqual(gateway.adminUrls.map(() => 200));

    await scim(at(1, `/Users/${id}`), 'PATCH', patchBody({ op: 'Replace', path: 'active', value: 'False' }));
    expect(await statuses()).toEqual(gateway.adminUrls.map(() => 401));
    const refused = await get(api(0, '/config'), bearer(token.body.token));
    expect(refused.body.error.message).toContain('deactivated');

    // Back on: the token works again; out of the group that made them Admin: refused again.
    await scim(at(0, `/Users/${id}`), 'PATCH', patchBody({ op: 'replace', value: { active: true } }));
    expect(await statuses()).toEqual(gateway.adminUrls.map(() => 200));
    await scim(
      at(0, `/Groups/${group.body.id}`),
      'PATCH',
      patchBody({ op: 'remove', path: `members[value eq "${id}"]` }),
    );
    expect(await statuses()).toEqual(gateway.adminUrls.map(() => 401));
    expect((await get(api(1, '/config'), bearer(token.body.token))).body.error.message).toContain(
      'no longer holds',
    );

    // Deleting the user revokes their tokens.
    expect((await scim(at(1, `/Users/${id}`), 'DELETE')).status).toBe(204);
    const tokens = (await get(api(0, '/tokens'), ADMIN)).body as Json[];
    expect(tokens.map((entry) => entry.id)).not.toContain(token.body.id);
    await scim(at(0, `/Groups/${group.body.id}`), 'DELETE');
  });

  it('opens SCIM with its own token only, and that token opens nothing under /api', async () => {
    const apiToken = (await call('POST', api(0, '/tokens'), { name: 'api', role: 'admin' }, ADMIN)).body
      .token;
    for (const replica of gateway.adminUrls.keys()) {
      for (const token of ['wrong-token', ADMIN_TOKEN, apiToken]) {
        const refused = await scim(at(replica, '/Users'), 'GET', undefined, token);
        expect(refused.status).toBe(401);
        expect(refused.body).toMatchObject({
          schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
          status: '401',
        });
      }
      expect((await get(api(replica, '/users'), bearer(SCIM_TOKEN))).status).toBe(401);
      expect((await scim(at(replica, '/ServiceProviderConfig'), 'GET')).status).toBe(200);
    }
  });

  it('answers bad filters and PATCH paths with 400 in SCIM’s body', async () => {
    const badFilter = await scim(at(0, `/Users?${filter('userName eq')}`), 'GET');
    expect(badFilter.status).toBe(400);
    expect(badFilter.body).toMatchObject({ status: '400', scimType: 'invalidFilter' });
    const user = (await scim(at(1, '/Users'), 'POST', { userName: 'paths@example.com' })).body.id;
    const badPath = await scim(
      at(1, `/Users/${user}`),
      'PATCH',
      patchBody({ op: 'add', path: 'emails[type eq', value: 'x' }),
    );
    expect(badPath.status).toBe(400);
    expect(badPath.body.scimType).toBe('invalidPath');
    const duplicate = await scim(at(0, '/Users'), 'POST', { userName: 'PATHS@example.com' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.scimType).toBe('uniqueness');
    expect((await scim(at(0, '/Users/usr_unknown'), 'GET')).status).toBe(404);
  });
});

describe.each(MODES)('SCIM without GW_SCIM_TOKEN (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  beforeAll(async () => {
    gateway = await start({ scim: false });
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('answers 503 naming the variable', async () => {
    const answer = await scim(`${gateway.adminUrl}/scim/v2/Users`, 'GET');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ status: '503', detail: expect.stringContaining('GW_SCIM_TOKEN') });
  });
});
