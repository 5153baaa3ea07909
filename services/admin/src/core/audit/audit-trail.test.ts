// The audit trail of the admin API over a real SQLite audit store and the real express chain (stub services):
// which requests are recorded and how, secrets redacted, refusals recorded once, the answer never waiting for
// its record, and a sink that never throws.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GovernanceService } from '@gw/governance';
import type { AuditRecord, AuditStore } from '@gw/logs';
import { SqliteAuditStore } from '@gw/logs/sqlite-audit';
import type { RouterService } from '@gw/router';
import {
  LiveSettings,
  type Logger,
  notFound,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { capturedLogger } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCall } from '../../testing/admin-harness.ts';
import { IdentityStore } from '../access/identity-store.ts';
import { createAdminApp } from '../admin-app.ts';
import type { AuditGate } from './audit-sink.ts';
import { type AuditHolder, createAuditStoreSink, storeHolder, toAuditEntry } from './audit-store-sink.ts';
import { auditAction } from './audit-trail.ts';

const ADMIN = 'audit-trail-admin-token';
const KEY_VALUE = 'sk-gw-trail0000000000000000000000000000';
const UPSTREAM = 'sk-upstream-trail-secret-123456';

const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;

/** Providers and virtual keys in memory, answering as the real services do (keys masked, a value once). */
function services() {
  const providers = new Map<string, Record<string, unknown>>();
  const keys = new Map<string, Record<string, unknown>>();
  const masked = (config: Record<string, unknown>) => ({
    ...config,
    keys: ((config['keys'] as Array<{ value: string }>) ?? []).map((key) => ({
      ...key,
      value: 'sk-****3456',
    })),
  });
  const router = {
    listProviders: async () => [...providers.values()].map(masked),
    getProvider: async (name: string) => {
      const provider = providers.get(name);
      if (!provider) throw notFound(`provider ${name}`);
      return masked(provider);
    },
    putProvider: async (name: string, config: Record<string, unknown>) => {
      providers.set(name, { name, ...config });
      return masked({ name, ...config });
    },
    patchProvider: async (name: string, patch: Record<string, unknown>) => {
      const provider = { ...providers.get(name), ...patch };
      providers.set(name, provider);
      return masked(provider);
    },
    deleteProvider: async (name: string) => {
      if (!providers.delete(name)) throw notFound(`provider ${name}`);
    },
  } as unknown as RouterService;
  const governance = {
    manage: async (request: { action: string; id?: string; body?: Record<string, unknown> }) => {
      if (request.action === 'create') {
        const key = { id: 'vk-1', ...request.body, value: KEY_VALUE };
        keys.set('vk-1', key);
        return key;
      }
      if (request.action === 'list')
        return [...keys.values()].map((key) => ({ ...key, value: 'sk-gw-****0000' }));
      const key = keys.get(request.id ?? '');
      if (!key) throw notFound(`virtual key ${request.id}`);
      if (request.action === 'get') return { ...key, value: 'sk-gw-****0000' };
      if (request.action === 'rotate') return { ...key, value: `${KEY_VALUE}-rotated` };
      if (request.action === 'delete') {
        keys.delete(key['id'] as string);
        return { deleted: key['id'] };
      }
      throw new Error(`unexpected ${request.action}`);
    },
  } as unknown as GovernanceService;
  return { router, governance };
}

async function startApp(
  audit: AuditGate | undefined,
  auditStore: AuditStore | undefined,
  logger: Logger = silent,
) {
  const store = await MemoryStore.open();
  const identities = new IdentityStore({ store, logger: silent });
  const settings = LiveSettings.of(parseGatewayConfig({}));
  const app = createAdminApp({
    ...services(),
    logger,
    auth: { adminToken: ADMIN, allowAnonymous: false },
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
    loadBalancer: { store, seed: settings.loadBalancer },
    systemConfig: { store, settings },
    identities,
    audit,
    auditLogs: { store: auditStore },
  });
  const server: Server = createServer((request, response) => {
    if (!app.handle(request, response)) response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await identities.putRole({
    id: 'token-maker',
    name: 'Token maker',
    description: '',
    permissions: ['tokens:read', 'tokens:write'],
    team_scoped: false,
    built_in: false,
  });
  const token = async (role: string) =>
    (await identities.createToken({ name: role, role, created_by: 'test' })).value;
  return {
    url,
    app,
    tokens: {
      viewer: await token('viewer'),
      developer: await token('developer'),
      tokenMaker: await token('token-maker'),
    },
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

describe('audit actions', () => {
  it('names a change by its method, and a POST to a sub-action by its verb', () => {
    expect(auditAction('POST', ['providers'])).toBe('create');
    expect(auditAction('POST', ['governance', 'virtual-keys', 'vk', 'rotate'])).toBe('rotate');
    expect(auditAction('POST', ['vault', 'refresh'])).toBe('refresh');
    expect(auditAction('POST', ['alerts', 'channels', 'c', 'test'])).toBe('test');
    expect(auditAction('POST', ['test'])).toBe('create');
    expect(auditAction('PUT', ['config'])).toBe('update');
    expect(auditAction('PATCH', ['providers', 'openai'])).toBe('update');
    expect(auditAction('DELETE', ['providers', 'openai'])).toBe('delete');
  });
});

describe('audit entries', () => {
  const event = { actor: 'bootstrap', action: 'update', target: 'PUT /api/x', status: 200, requestId: 'r' };

  it('redacts every credential field and key-shaped text of before and after, as a Viewer sees answers', () => {
    const entry = toAuditEntry({
      ...event,
      before: {
        keys: [{ id: 'k', value: 'sk-****3456', weight: 1 }],
        token: 'gwat_abcdefghijklmnop',
        password: 'hunter2hunter2',
        client_secret: 'shh-its-a-secret',
        network_config: { base_url: 'https://user:pa55word@example.com/v1', headers: { 'x-team': 'blue' } },
        note: 'a key sk-proj-abcdefghijklmnopqrstuvwx pasted',
        value: KEY_VALUE,
        when: new Date(0),
        missing: undefined,
      },
      after: undefined,
      detail: `Bearer ${UPSTREAM}`,
    });
    expect(entry.before).toEqual({
      keys: [{ id: 'k', value: '[redacted]', weight: 1 }],
      token: '[redacted]',
      password: '[redacted]',
      client_secret: '[redacted]',
      network_config: {
        base_url: 'https://user:[redacted]@example.com/v1',
        headers: { 'x-team': '[redacted]' },
      },
      note: 'a key [redacted] pasted',
      value: '[redacted]',
      when: '1970-01-01T00:00:00.000Z',
    });
    expect(entry.after).toBeNull();
    expect(entry.detail).toBe('[redacted]');
    expect(JSON.stringify(entry)).not.toContain('hunter2');
  });

  it('clips texts to the store’s limits and replaces a state too large to keep by a note', () => {
    const entry = toAuditEntry({
      ...event,
      target: `PUT /api/${'x'.repeat(5000)}`,
      detail: 'd'.repeat(5000),
      role: '',
      source: undefined,
      after: { list: 'y'.repeat(70_000) },
    });
    expect(entry.target).toHaveLength(2048);
    expect(entry.detail).toHaveLength(2048);
    expect(entry.role).toBeNull();
    expect(entry.source).toBeNull();
    expect(entry.after).toMatchObject({ omitted: 'more than 65536 characters of JSON' });
  });

  it('never throws from record: a record the store cannot keep is logged, counted and kept for later', async () => {
    const { logger, lines } = capturedLogger();
    let failures = 0;
    let down = true;
    const appended: unknown[] = [];
    const sink = createAuditStoreSink({
      holder: {
        what: 'the audit store',
        append: async (entry) => {
          if (down) throw new Error('database unreachable');
          appended.push(entry);
        },
        ping: async () => {
          if (down) throw new Error('database unreachable');
        },
      },
      logger,
      onFailure: () => {
        failures += 1;
      },
      retryMs: 20,
    });
    await expect(sink.record({ ...event, after: { value: KEY_VALUE } })).resolves.toBeUndefined();
    expect(failures).toBe(1);
    const line = lines.find((text) => text.includes('audit: a record could not be stored'));
    expect(line).toContain('database unreachable');
    expect(lines.join('\n')).not.toContain(KEY_VALUE);
    // While a record is kept, changes are refused; once the store answers, it is written first.
    await expect(sink.admit()).rejects.toMatchObject({ status: 503, code: 'audit_unavailable' });
    down = false;
    await sink.admit();
    expect(appended).toHaveLength(1);
  });
});

describe('the audit trail of /api', () => {
  let directory: string;
  let store: SqliteAuditStore;
  let app: Awaited<ReturnType<typeof startApp>>;
  const admin = { token: ADMIN };
  const records = async () => (await store.query({ order: 'asc', limit: 1000 })).records;
  const last = async () => (await store.query({ limit: 1 })).records[0]!;
  /** The records after the answer: the trail appends once the answer is sent. */
  const settled = async () => {
    await app.app.drainAudit();
    return records();
  };

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gw-audit-trail-'));
    store = await SqliteAuditStore.open({ dataDir: directory });
    app = await startApp(createAuditStoreSink({ holder: storeHolder(store), logger: silent }), store);
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('records a create with the answer as after, then an update and a delete with the resource read around them', async () => {
    const body = { name: 'anthropic', keys: [{ id: 'main', value: UPSTREAM }] };
    expect((await adminCall(`${app.url}/api/providers`, 'POST', { ...admin, body })).status).toBe(201);
    expect(
      (await adminCall(`${app.url}/api/providers/anthropic`, 'PATCH', { ...admin, body: { weight: 2 } }))
        .status,
    ).toBe(200);
    expect((await adminCall(`${app.url}/api/providers/anthropic`, 'DELETE', admin)).status).toBe(200);
    const [created, updated, deleted] = (await settled()).slice(-3) as AuditRecord[];
    expect(created).toMatchObject({
      actor: 'bootstrap',
      role: 'admin',
      action: 'create',
      target: 'POST /api/providers',
      status: 201,
      before: null,
      after: { name: 'anthropic', keys: [{ id: 'main', value: '[redacted]' }] },
    });
    expect(created!.source).toMatch(/127\.0\.0\.1/);
    expect(created!.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(updated).toMatchObject({
      action: 'update',
      target: 'PATCH /api/providers/anthropic',
      before: { name: 'anthropic' },
      after: { name: 'anthropic', weight: 2 },
    });
    expect(updated!.before).not.toHaveProperty('weight');
    expect(deleted).toMatchObject({ action: 'delete', before: { weight: 2 }, after: null, status: 200 });
    expect(JSON.stringify(await records())).not.toContain(UPSTREAM);
    expect(await store.verify()).toMatchObject({ ok: true });
  });

  it('records a key’s create and rotation without its value, under the request’s id', async () => {
    const created = await adminCall(`${app.url}/api/governance/virtual-keys`, 'POST', {
      ...admin,
      body: { name: 'k' },
    });
    expect(created.body.value).toBe(KEY_VALUE);
    const rotated = await fetch(`${app.url}/api/governance/virtual-keys/vk-1/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(rotated.status).toBe(200);
    await app.app.drainAudit();
    const rotation = await last();
    expect(rotation).toMatchObject({
      action: 'rotate',
      target: 'POST /api/governance/virtual-keys/vk-1/rotate',
    });
    expect(rotation.request_id).toBe(rotated.headers.get('x-request-id'));
    expect(rotation.after).toMatchObject({ id: 'vk-1', value: '[redacted]' });
    expect(JSON.stringify(await records())).not.toContain(KEY_VALUE);
  });

  it('records nothing for reads', async () => {
    const before = (await settled()).length;
    for (const path of [
      '/providers',
      '/config',
      '/governance/virtual-keys',
      '/audit-logs',
      '/audit-logs/verify',
    ]) {
      expect((await adminCall(`${app.url}/api${path}`, 'GET', admin)).status).toBe(200);
    }
    expect((await settled()).length).toBe(before);
  });

  it('records a change that failed with its status and message', async () => {
    expect((await adminCall(`${app.url}/api/providers/nothing`, 'DELETE', admin)).status).toBe(404);
    await app.app.drainAudit();
    expect(await last()).toMatchObject({
      action: 'delete',
      target: 'DELETE /api/providers/nothing',
      status: 404,
      detail: expect.stringContaining('nothing'),
      before: null,
      after: null,
    });
  });

  it('records a 401 and a 403 as access_denied once, with whoever was known, reads included', async () => {
    expect((await adminCall(`${app.url}/api/providers`, 'GET')).status).toBe(401);
    await app.app.drainAudit();
    expect(await last()).toMatchObject({
      actor: 'anonymous',
      role: null,
      action: 'access_denied',
      target: 'GET /api/providers',
      status: 401,
    });
    const before = (await settled()).length;
    const refused = await adminCall(`${app.url}/api/providers`, 'POST', {
      token: app.tokens.viewer,
      body: { name: 'x' },
    });
    expect(refused.status).toBe(403);
    const added = (await settled()).slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      actor: expect.stringMatching(/^token:/),
      role: 'viewer',
      action: 'access_denied',
      target: 'POST /api/providers',
      status: 403,
      detail: refused.body.error.message,
    });
    // A 403 of team scoping, and one a module answers itself (a role beyond the caller's), once each.
    const scoped = await adminCall(`${app.url}/api/governance/virtual-keys`, 'POST', {
      token: app.tokens.developer,
      body: { name: 'k', team_id: 'elsewhere' },
    });
    expect(scoped.status).toBe(403);
    const escalation = await adminCall(`${app.url}/api/tokens`, 'POST', {
      token: app.tokens.tokenMaker,
      body: { name: 'mine', role: 'admin' },
    });
    expect(escalation.status).toBe(403);
    const after = (await settled()).slice(before + 1);
    expect(after.map((record) => [record.action, record.role, record.status, record.target])).toEqual([
      ['access_denied', 'developer', 403, 'POST /api/governance/virtual-keys'],
      ['access_denied', 'token-maker', 403, 'POST /api/tokens'],
    ]);
    expect(after[1]!.detail).toBe(escalation.body.error.message);
  });

  it('answers the audit log: pages, filters, one record, 400 and 404, the chain check, JSON lines', async () => {
    const page = await adminCall(`${app.url}/api/audit-logs?limit=2&order=asc`, 'GET', admin);
    expect(page.body.records.map((record: AuditRecord) => record.seq)).toEqual([1, 2]);
    expect(page.body.next_cursor).toBe('2');
    const next = await adminCall(`${app.url}/api/audit-logs?limit=2&order=asc&cursor=2`, 'GET', admin);
    expect(next.body.records[0].seq).toBe(3);
    const denied = await adminCall(`${app.url}/api/audit-logs?action=access_denied&status=401`, 'GET', {
      token: app.tokens.viewer,
    });
    expect(denied.status).toBe(200);
    expect(denied.body.records.map((record: AuditRecord) => record.target)).toEqual(['GET /api/providers']);
    expect((await adminCall(`${app.url}/api/audit-logs/1`, 'GET', admin)).body).toMatchObject({ seq: 1 });
    const missing = await adminCall(`${app.url}/api/audit-logs/999`, 'GET', admin);
    expect(missing.status).toBe(404);
    const bad = await adminCall(`${app.url}/api/audit-logs/abc`, 'GET', admin);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("'abc' is not a record's seq");
    const badLimit = await adminCall(`${app.url}/api/audit-logs?limit=5000`, 'GET', admin);
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.param).toBe('limit');
    const badCursor = await adminCall(`${app.url}/api/audit-logs?cursor=x`, 'GET', admin);
    expect(badCursor.body.error.message).toContain('cursor');
    expect((await adminCall(`${app.url}/api/audit-logs?nope=1`, 'GET', admin)).status).toBe(400);
    expect((await adminCall(`${app.url}/api/audit-logs/1`, 'DELETE', admin)).status).toBe(405);
    expect((await adminCall(`${app.url}/api/audit-logs/1/more`, 'GET', admin)).status).toBe(404);
    expect(
      (await adminCall(`${app.url}/api/audit-logs`, 'GET', { token: app.tokens.developer })).status,
    ).toBe(403);

    const verified = await adminCall(`${app.url}/api/audit-logs/verify`, 'GET', admin);
    expect(verified.body).toMatchObject({ ok: true, records: expect.any(Number) });

    const exported = await fetch(`${app.url}/api/audit-logs/export?actor=bootstrap`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson');
    expect(exported.headers.get('x-request-id')).toBeTruthy();
    const lines = (await exported.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.every((record) => record.actor === 'bootstrap')).toBe(true);
    expect(lines.map((record) => record.seq)).toEqual(
      [...lines.map((record) => record.seq)].sort((a, b) => a - b),
    );
    const badExport = await adminCall(`${app.url}/api/audit-logs/export?limit=5`, 'GET', admin);
    expect(badExport.status).toBe(400);
  });

  it('answers a change only once its record is held, and refuses changes while it cannot be', async () => {
    let release: () => void = () => {};
    let held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let down = false;
    const appended: Array<{ action: string; status: number; detail: string | null | undefined }> = [];
    const holder: AuditHolder = {
      what: 'the audit store',
      append: async (entry) => {
        await held;
        if (down) throw new Error('database unreachable');
        appended.push({ action: entry.action, status: entry.status, detail: entry.detail });
      },
      ping: async () => {
        if (down) throw new Error('database unreachable');
      },
    };
    const { logger, lines } = capturedLogger();
    const slow = await startApp(createAuditStoreSink({ holder, logger, retryMs: 50 }), undefined, logger);
    try {
      let answered = false;
      const answer = adminCall(`${slow.url}/api/providers`, 'POST', {
        ...admin,
        body: { name: 'quick' },
      }).then((result) => {
        answered = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      release();
      expect((await answer).status).toBe(201);
      expect(appended).toEqual([{ action: 'create', status: 201, detail: null }]);
      // A read never waits for the audit log, even while it is held up.
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      expect((await adminCall(`${slow.url}/api/providers`, 'GET', admin)).status).toBe(200);
      release();

      // The store down before a change: 503, and nothing changed.
      down = true;
      const refused = await adminCall(`${slow.url}/api/providers`, 'POST', {
        ...admin,
        body: { name: 'refused' },
      });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('audit_unavailable');
      expect(refused.body.error.message).toContain('this change was not made');
      // Every refusal of an outage alike: one line, not one per refused change (issue 25, defect 10).
      for (let index = 0; index < 20; index += 1) {
        const again = await adminCall(`${slow.url}/api/providers`, 'POST', {
          ...admin,
          body: { name: `refused-${index}` },
        });
        expect(again.status).toBe(503);
      }
      expect(lines.filter((line) => line.includes('admin request failed'))).toHaveLength(1);
      const providers = await adminCall(`${slow.url}/api/providers`, 'GET', admin);
      expect(providers.body.map((provider: { name: string }) => provider.name)).toEqual(['quick']);

      // Back: the change is made and recorded, in order.
      down = false;
      expect((await adminCall(`${slow.url}/api/providers/quick`, 'DELETE', admin)).status).toBe(200);
      await slow.app.drainAudit();
      expect(appended.map((record) => record.action)).toEqual(['create', 'delete']);
      const off = await adminCall(`${slow.url}/api/audit-logs`, 'GET', admin);
      expect(off.status).toBe(503);
    } finally {
      release();
      await slow.close();
    }
  });

  it('answers 503 for a change made while the store failed, keeps its record and writes it first when back', async () => {
    let down = false;
    const appended: Array<{ action: string; status: number; detail: string | null | undefined }> = [];
    const holder: AuditHolder = {
      what: 'the audit store',
      // Up for the check before the change, down for the append after it.
      append: async (entry) => {
        if (down) throw new Error('database unreachable');
        appended.push({ action: entry.action, status: entry.status, detail: entry.detail });
      },
      ping: async () => {
        down = !down && appended.length === 0;
      },
    };
    const flaky = await startApp(
      createAuditStoreSink({ holder, logger: silent, retryMs: 60_000 }),
      undefined,
    );
    try {
      const made = await adminCall(`${flaky.url}/api/providers`, 'POST', {
        ...admin,
        body: { name: 'made' },
      });
      expect(made.status).toBe(503);
      expect(made.body.error.message).toContain(
        'the change was made, but its audit record could not be stored',
      );
      down = false;
      expect((await adminCall(`${flaky.url}/api/providers/made`, 'DELETE', admin)).status).toBe(200);
      expect(appended).toEqual([
        {
          action: 'create',
          status: 503,
          detail: expect.stringContaining('answered 503: the change was made (status 201)'),
        },
        { action: 'delete', status: 200, detail: null },
      ]);
    } finally {
      await flaky.close();
    }
  });
});
