// `/scim/v2` over real HTTP on a memory store, with a recording audit sink: the protocol's answers (bodies,
// statuses, scimType, content type, ETag), roles following groups, and the audit entries of changes and refusals.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError, type Logger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityStore } from '../access/identity-store.ts';
import type { AuditEvent, AuditGate } from '../audit/audit-sink.ts';
import { ScimGroupStore } from './scim-groups.ts';
import { createScimRouter, type ScimRouterOptions } from './scim-router.ts';

const TOKEN = 'scim-router-test-token-0123456789';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;

async function serve(options: Partial<ScimRouterOptions>) {
  const store = await MemoryStore.open();
  const identities = new IdentityStore({ store, logger: silent });
  const events: AuditEvent[] = [];
  const app = express();
  app.use(
    '/scim/v2',
    createScimRouter({
      token: TOKEN,
      identities,
      groups: new ScimGroupStore({ store }),
      auth: {
        role_mappings: [
          { claim: 'groups', value: 'gw-admins', role: 'admin', team_ids: [] },
          { claim: 'groups', value: 'gw-devs', role: 'developer', team_ids: ['team-a'] },
        ],
      },
      audit: { record: async (event) => void events.push(event) },
      logger: silent,
      maxBodyBytes: 64 * 1024,
      ...options,
    }),
  );
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2`;
  return {
    url,
    identities,
    events,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

async function scim(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/scim+json', ...headers },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
  const json: any = text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body: json };
}

const newUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName,
  name: { givenName: 'Given', familyName: 'Family' },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
  ...extra,
});

describe('SCIM router: the token', () => {
  it('answers 503 naming GW_SCIM_TOKEN when it is unset, in SCIM’s error body', async () => {
    const server = await serve({ token: undefined });
    try {
      const answer = await scim(`${server.url}/Users`, 'GET');
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toBe('application/scim+json');
      expect(answer.body).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '503',
        detail: expect.stringContaining('GW_SCIM_TOKEN'),
      });
    } finally {
      await server.close();
    }
  });

  it('answers 503 naming the store when the admin has none', async () => {
    const server = await serve({ identities: undefined, groups: undefined });
    try {
      const answer = await scim(`${server.url}/Users`, 'GET');
      expect(answer.status).toBe(503);
      expect(answer.body.detail).toContain('REDIS_URL');
    } finally {
      await server.close();
    }
  });

  it('refuses a missing or wrong token with 401, and records the refusal', async () => {
    const server = await serve({});
    try {
      const missing = await scim(`${server.url}/Users`, 'GET', undefined, {});
      expect(missing.status).toBe(401);
      expect(missing.body.status).toBe('401');
      expect(missing.headers.get('www-authenticate')).toContain('Bearer');
      const wrong = await scim(
        `${server.url}/Groups`,
        'POST',
        { displayName: 'x' },
        { authorization: 'Bearer nope' },
      );
      expect(wrong.status).toBe(401);
      expect(server.events).toEqual([
        expect.objectContaining({
          actor: 'anonymous',
          action: 'access_denied',
          target: 'GET /scim/v2/Users',
          status: 401,
        }),
        expect.objectContaining({ action: 'access_denied', target: 'POST /scim/v2/Groups', status: 401 }),
      ]);
      expect(JSON.stringify(server.events)).not.toContain(TOKEN);
    } finally {
      await server.close();
    }
  });
});

describe('SCIM router: resources', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve({});
  });
  afterAll(async () => server?.close());

  it('serves the discovery documents', async () => {
    const config = await scim(`${server.url}/ServiceProviderConfig`, 'GET');
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true },
      bulk: { supported: false },
    });
    const types = await scim(`${server.url}/ResourceTypes`, 'GET');
    expect(types.body.Resources.map((type: { id: string }) => type.id)).toEqual(['User', 'Group']);
    const schemas = await scim(`${server.url}/Schemas`, 'GET');
    expect(schemas.body.totalResults).toBe(3);
    const user = await scim(`${server.url}/Schemas/urn:ietf:params:scim:schemas:core:2.0:User`, 'GET');
    expect(user.body.attributes.map((attribute: { name: string }) => attribute.name)).toContain('userName');
    expect((await scim(`${server.url}/Schemas/urn:nothing`, 'GET')).status).toBe(404);
  });

  it('creates, reads, lists, filters, replaces and deletes a user, with meta and ETag', async () => {
    const created = await scim(
      `${server.url}/Users`,
      'POST',
      newUser('Ann@Example.com', { externalId: 'okta-1', title: 'Engineer' }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/scim+json');
    const id = created.body.id;
    expect(created.headers.get('location')).toBe(`${server.url}/Users/${id}`);
    expect(created.body).toMatchObject({
      userName: 'Ann@Example.com',
      externalId: 'okta-1',
      displayName: 'Given Family',
      active: true,
      title: 'Engineer',
      meta: {
        resourceType: 'User',
        location: `${server.url}/Users/${id}`,
        version: expect.stringMatching(/^W\/"/),
      },
    });
    expect(created.headers.get('etag')).toBe(created.body.meta.version);
    // The admin user behind it: email lowercased, no role (no group yet, no default role).
    expect(await server.identities.getUser(id)).toMatchObject({
      email: 'ann@example.com',
      user_name: 'Ann@Example.com',
      roles: [],
      source: 'scim',
      external_id: 'okta-1',
    });

    const duplicate = await scim(`${server.url}/Users`, 'POST', newUser('ann@example.COM'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.scimType).toBe('uniqueness');

    const found = await scim(
      `${server.url}/Users?filter=${encodeURIComponent('userName eq "ann@example.com"')}`,
      'GET',
    );
    expect(found.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
    });
    expect(found.body.Resources[0].id).toBe(id);
    const none = await scim(
      `${server.url}/Users?filter=${encodeURIComponent('externalId eq "okta-2"')}`,
      'GET',
    );
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });

    const replaced = await scim(
      `${server.url}/Users/${id}`,
      'PUT',
      newUser('ann@example.com', { displayName: 'Ann' }),
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ displayName: 'Ann', userName: 'ann@example.com' });
    expect(replaced.body.title).toBeUndefined();
    expect(replaced.body.externalId).toBeUndefined();

    const stale = await scim(
      `${server.url}/Users/${id}`,
      'PATCH',
      { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'x' }] },
      {
        authorization: `Bearer ${TOKEN}`,
        'if-match': created.body.meta.version,
      },
    );
    expect(stale.status).toBe(412);

    expect((await scim(`${server.url}/Users/${id}`, 'DELETE')).status).toBe(204);
    const gone = await scim(`${server.url}/Users/${id}`, 'GET');
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ status: '404', detail: expect.stringContaining(id) });
  });

  it('gives roles and teams from group names, recomputed when members, names or groups change', async () => {
    const dev = (await scim(`${server.url}/Users`, 'POST', newUser('dev@example.com'))).body.id;
    const ops = (await scim(`${server.url}/Users`, 'POST', newUser('ops@example.com'))).body.id;
    const group = await scim(`${server.url}/Groups`, 'POST', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'gw-devs',
      members: [{ value: dev }],
    });
    expect(group.status).toBe(201);
    expect(group.body.members).toEqual([expect.objectContaining({ value: dev, display: 'Given Family' })]);
    expect(await server.identities.getUser(dev)).toMatchObject({
      roles: ['developer'],
      team_ids: ['team-a'],
    });
    const user = await scim(`${server.url}/Users/${dev}`, 'GET');
    expect(user.body.groups).toEqual([expect.objectContaining({ value: group.body.id, display: 'gw-devs' })]);

    const patch = (operations: unknown[]) =>
      scim(`${server.url}/Groups/${group.body.id}`, 'PATCH', { schemas: [PATCH_OP], Operations: operations });
    expect((await patch([{ op: 'add', path: 'members', value: [{ value: ops }] }])).status).toBe(200);
    expect((await server.identities.getUser(ops))?.roles).toEqual(['developer']);
    await patch([{ op: 'Replace', path: 'displayName', value: 'gw-admins' }]);
    expect((await server.identities.getUser(dev))?.roles).toEqual(['admin']);
    expect((await server.identities.getUser(ops))?.roles).toEqual(['admin']);
    await patch([{ op: 'remove', path: `members[value eq "${ops}"]` }]);
    expect((await server.identities.getUser(ops))?.roles).toEqual([]);
    const unknown = await patch([{ op: 'add', path: 'members', value: [{ value: 'usr_nobody' }] }]);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      scimType: 'invalidValue',
      detail: expect.stringContaining('usr_nobody'),
    });

    const clash = await scim(`${server.url}/Groups`, 'POST', { displayName: 'GW-ADMINS' });
    expect(clash.status).toBe(409);
    const excluded = await scim(
      `${server.url}/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "gw-admins"')}`,
      'GET',
    );
    expect(excluded.body.Resources).toHaveLength(1);
    expect(excluded.body.Resources[0].members).toBeUndefined();
    const only = await scim(`${server.url}/Groups/${group.body.id}?attributes=displayName`, 'GET');
    expect(Object.keys(only.body).sort()).toEqual(['displayName', 'id', 'schemas']);

    expect((await scim(`${server.url}/Groups/${group.body.id}`, 'DELETE')).status).toBe(204);
    expect((await server.identities.getUser(dev))?.roles).toEqual([]);

    const events = server.events.filter((event) => event.target.startsWith('scim:'));
    expect(events).toContainEqual(
      expect.objectContaining({
        actor: 'scim',
        action: 'create',
        target: `scim:Groups/${group.body.id}`,
        status: 201,
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        action: 'update',
        target: `scim:Users/${dev}`,
        before: expect.objectContaining({ roles: ['developer'] }),
        after: expect.objectContaining({ roles: ['admin'] }),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ action: 'delete', target: `scim:Groups/${group.body.id}` }),
    );
  });

  it('pages and sorts lists', async () => {
    for (const name of ['p3', 'p1', 'p2'])
      await scim(`${server.url}/Users`, 'POST', newUser(`${name}@page.example`));
    const filter = encodeURIComponent('userName ew "@page.example"');
    const page = await scim(
      `${server.url}/Users?filter=${filter}&sortBy=userName&startIndex=2&count=1`,
      'GET',
    );
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources[0].userName).toBe('p2@page.example');
    const descending = await scim(
      `${server.url}/Users?filter=${filter}&sortBy=userName&sortOrder=descending`,
      'GET',
    );
    expect(descending.body.Resources.map((user: { userName: string }) => user.userName)).toEqual([
      'p3@page.example',
      'p2@page.example',
      'p1@page.example',
    ]);
    const counted = await scim(`${server.url}/Users?filter=${filter}&count=0`, 'GET');
    expect(counted.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
    const search = await scim(`${server.url}/Users/.search`, 'POST', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      filter: 'userName eq "p1@page.example"',
      attributes: ['userName'],
    });
    expect(search.body.Resources).toEqual([
      { schemas: expect.any(Array), id: expect.any(String), userName: 'p1@page.example' },
    ]);
  });

  it('answers bad input with 400 and its scimType, never a 500', async () => {
    const cases: Array<[string, string, unknown, number, string | undefined, string]> = [
      ['GET', '/Users?filter=userName%20eq', undefined, 400, 'invalidFilter', 'expected a value'],
      ['GET', '/Users?filter=password%20pr', undefined, 400, 'invalidFilter', 'password'],
      ['GET', '/Users?startIndex=abc', undefined, 400, 'invalidValue', 'startIndex'],
      ['GET', '/Users?sortOrder=sideways', undefined, 400, 'invalidValue', 'sortOrder'],
      ['GET', '/Users?sortBy=nothing', undefined, 400, 'invalidValue', 'sortBy'],
      ['POST', '/Users', '{not json', 400, 'invalidSyntax', 'JSON'],
      ['POST', '/Users', [], 400, 'invalidSyntax', 'JSON object'],
      ['POST', '/Users', { name: { givenName: 'x' } }, 400, 'invalidValue', 'userName: is required'],
      ['POST', '/Users', { userName: 'jdoe' }, 400, 'invalidValue', 'not an email address'],
      ['POST', '/Users', { userName: 'x@y.example', active: 'perhaps' }, 400, 'invalidValue', 'active'],
      ['POST', '/Users', { userName: 'x@y.example', schemas: 'User' }, 400, 'invalidSyntax', 'schemas'],
      ['POST', '/Groups', { members: [] }, 400, 'invalidValue', 'displayName: is required'],
      [
        'POST',
        '/Groups',
        { displayName: 'g', members: [{ value: 'grp_x', type: 'Group' }] },
        400,
        'invalidValue',
        'nested',
      ],
      [
        'PATCH',
        '/Users/usr_missing',
        { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'title' }] },
        404,
        undefined,
        'usr_missing',
      ],
      ['PUT', '/Groups/grp_missing', { displayName: 'x' }, 404, undefined, 'grp_missing'],
      ['DELETE', '/Users', undefined, 405, undefined, 'GET or POST'],
      ['GET', '/Bulk', undefined, 404, undefined, 'no SCIM endpoint'],
    ];
    for (const [method, path, body, status, scimType, detail] of cases) {
      const answer = await scim(`${server.url}${path}`, method, body);
      expect({ method, path, status: answer.status, scimType: answer.body.scimType }).toEqual({
        method,
        path,
        status,
        scimType,
      });
      expect(answer.body.detail).toContain(detail);
      expect(answer.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
    }
  });

  it('takes a userName that is not an email when the primary email is one', async () => {
    const created = await scim(`${server.url}/Users`, 'POST', {
      userName: 'jdoe',
      emails: [
        { value: 'john@home.example', type: 'home' },
        { value: 'John.Doe@Example.com', type: 'work', primary: 'True' },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ userName: 'jdoe', displayName: 'jdoe' });
    expect((await server.identities.getUser(created.body.id))?.email).toBe('john.doe@example.com');
    const again = await scim(`${server.url}/Users`, 'POST', {
      userName: 'JDOE',
      emails: [{ value: 'other@example.com' }],
    });
    expect(again.status).toBe(409);
  });
});

describe('SCIM changes while the audit log cannot record them', () => {
  it('refuses a change with 503 and makes nothing, then answers once its record is held', async () => {
    let down = true;
    const held: AuditEvent[] = [];
    const unavailable = () =>
      new GatewayError({
        type: 'service_unavailable',
        code: 'audit_unavailable',
        message: 'the audit log cannot record changes now',
      });
    const gate: AuditGate = {
      record: async () => {},
      admit: async () => {
        if (down) throw unavailable();
      },
      hold: async (event) => {
        held.push(event);
      },
      drain: async () => {},
    };
    const served = await serve({ audit: gate });
    try {
      const refused = await scim(`${served.url}/Users`, 'POST', newUser('refused@example.com'));
      expect(refused.status).toBe(503);
      expect(refused.body.detail).toContain('cannot record changes');
      expect(await served.identities.listUsers()).toEqual([]);
      expect(held).toEqual([]);
      down = false;
      const made = await scim(`${served.url}/Users`, 'POST', newUser('made@example.com'));
      expect(made.status).toBe(201);
      expect(held).toEqual([expect.objectContaining({ actor: 'scim', action: 'create', status: 201 })]);
    } finally {
      await served.close();
    }
  });
});
