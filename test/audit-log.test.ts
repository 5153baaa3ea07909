// The audit log end to end (issue 18 item 6), both modes; the cluster runs two admin replicas appending to one
// chain in PostgreSQL. Changes of a provider and a virtual key through /api are recorded with actor, role and the
// resource before and after, their secrets nowhere in the log; a 401 and a 403 are recorded as access_denied;
// filters select exactly; the export is JSON lines that `scripts/audit-verify.ts` accepts, and after a record is
// edited (in a copy of the export, then in the database itself) the command and /api/audit-logs/verify name it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_TOKEN = 'audit-log-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const UPSTREAM_KEY = 'sk-ant-audit-upstream-secret-0000000001';

const CONFIG: GatewayConfigInput = {
  providers: {
    openai: {
      keys: [{ value: 'sk-openai-audit-config-0000000001' }],
      network_config: { base_url: 'http://127.0.0.1:9' },
    },
  },
};

interface AuditRecord {
  seq: number;
  actor: string;
  role: string | null;
  action: string;
  target: string;
  status: number;
  source: string | null;
  request_id: string;
  detail: string | null;
  before: Json;
  after: Json;
  hash: string;
}

/** Runs the verify command as a user would; answers its exit code and output. */
function verifyCommand(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/audit-verify.ts', ...args],
      { cwd: ROOT },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

const MODES = [
  [
    'embedded',
    async () => ({
      gateway: await startEmbedded({ config: CONFIG, adminToken: ADMIN_TOKEN }),
      database: undefined,
    }),
  ],
  [
    'cluster',
    async () => {
      const database = await createTestDatabase();
      const gateway = await startCluster({
        config: CONFIG,
        adminToken: ADMIN_TOKEN,
        replicas: { admin: 2 },
        env: { GW_LOGS_DATABASE_URL: database.url },
        readyTimeoutMs: 60_000,
      });
      return { gateway, database };
    },
  ],
] as const;

describe.each(MODES)('audit log (%s)', (mode, start) => {
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;
  let scratch: string;
  /** Secrets that must never appear in the audit log. */
  const secrets = [UPSTREAM_KEY];
  const on = (index: number, path: string) =>
    `${gateway.adminUrls[index % gateway.adminUrls.length]}/api${path}`;
  /** A change through replica `index`; answers its status, body and request id. */
  const change = async (
    index: number,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = ADMIN,
  ) => {
    const answer = await call(method, on(index, path), body, headers);
    return { ...answer, requestId: answer.headers.get('x-request-id')! };
  };
  /** The record of a request, once appended (after its answer), read through the other replica. */
  const recordOf = (requestId: string, index = 1) =>
    waitFor(
      async () => {
        const page = await get(on(index, `/audit-logs?request_id=${requestId}`), ADMIN);
        return page.body.records?.length === 1 ? (page.body.records[0] as AuditRecord) : undefined;
      },
      { timeoutMs: 10_000, what: `the audit record of ${requestId}` },
    );
  const all = async (query = '') =>
    (await get(on(0, `/audit-logs?limit=1000&order=asc${query}`), ADMIN)).body.records as AuditRecord[];

  beforeAll(async () => {
    ({ gateway, database } = await start());
    scratch = await mkdtemp(join(tmpdir(), 'gw-audit-test-'));
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('records creates, updates and deletes of a provider and a virtual key with who, what and before/after, secrets redacted', async () => {
    const created = await change(0, 'POST', '/providers', {
      name: 'anthropic',
      keys: [{ id: 'main', value: UPSTREAM_KEY }],
      network_config: { base_url: 'http://127.0.0.1:9', timeout_ms: 10_000 },
    });
    expect(created.status).toBe(201);
    const patched = await change(1, 'PATCH', '/providers/anthropic', {
      network_config: { timeout_ms: 23_456 },
    });
    expect(patched.status).toBe(200);
    const key = await change(0, 'POST', '/governance/virtual-keys', { name: 'audited-key' });
    expect(key.status).toBe(201);
    const keyValue: string = key.body.value;
    expect(keyValue).toMatch(/^sk-gw-/);
    secrets.push(keyValue);
    const renamed = await change(1, 'PATCH', `/governance/virtual-keys/${key.body.id}`, {
      name: 'renamed-key',
    });
    expect(renamed.status).toBe(200);
    const keyDeleted = await change(0, 'DELETE', `/governance/virtual-keys/${key.body.id}`);
    expect(keyDeleted.status).toBe(200);
    const providerDeleted = await change(1, 'DELETE', '/providers/anthropic');
    expect(providerDeleted.status).toBe(200);

    const admin = { actor: 'bootstrap', role: 'admin' };
    expect(await recordOf(created.requestId)).toMatchObject({
      ...admin,
      action: 'create',
      target: 'POST /api/providers',
      status: 201,
      before: null,
      after: { name: 'anthropic', keys: [{ id: 'main', value: '[redacted]' }] },
      source: expect.stringMatching(/127\.0\.0\.1/),
    });
    const providerUpdate = await recordOf(patched.requestId);
    expect(providerUpdate).toMatchObject({
      ...admin,
      action: 'update',
      target: 'PATCH /api/providers/anthropic',
    });
    expect(providerUpdate.before.network_config.timeout_ms).toBe(10_000);
    expect(providerUpdate.after.network_config.timeout_ms).toBe(23_456);
    expect(providerUpdate.after.keys).toEqual([expect.objectContaining({ id: 'main', value: '[redacted]' })]);
    expect(await recordOf(key.requestId)).toMatchObject({
      ...admin,
      action: 'create',
      target: 'POST /api/governance/virtual-keys',
      after: { id: key.body.id, name: 'audited-key', value: '[redacted]' },
    });
    expect(await recordOf(renamed.requestId)).toMatchObject({
      action: 'update',
      target: `PATCH /api/governance/virtual-keys/${key.body.id}`,
      before: { name: 'audited-key' },
      after: { name: 'renamed-key' },
    });
    expect(await recordOf(keyDeleted.requestId)).toMatchObject({
      action: 'delete',
      before: { id: key.body.id, name: 'renamed-key' },
      after: null,
      status: 200,
    });
    expect(await recordOf(providerDeleted.requestId)).toMatchObject({
      action: 'delete',
      target: 'DELETE /api/providers/anthropic',
      before: { name: 'anthropic' },
      after: null,
    });
    // Reads leave nothing (a change's record is there by now: the read's would be too).
    const read = await change(0, 'GET', '/providers/openai');
    expect(read.status).toBe(200);
    const marker = await change(1, 'POST', '/governance/virtual-keys', { name: 'marker-key' });
    secrets.push(marker.body.value);
    await recordOf(marker.requestId);
    expect((await get(on(0, `/audit-logs?request_id=${read.requestId}`), ADMIN)).body.records).toEqual([]);
    const text = JSON.stringify(await all());
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('records a 401 and a 403 as access_denied, with whoever was known', async () => {
    const token = await change(0, 'POST', '/tokens', { name: 'audit-viewer', role: 'viewer' });
    expect(token.status).toBe(201);
    secrets.push(token.body.token);
    expect((await recordOf(token.requestId)).after).toMatchObject({ id: token.body.id, token: '[redacted]' });

    const anonymous = await change(1, 'GET', '/providers', undefined, {});
    expect(anonymous.status).toBe(401);
    expect(await recordOf(anonymous.requestId)).toMatchObject({
      actor: 'anonymous',
      role: null,
      action: 'access_denied',
      target: 'GET /api/providers',
      status: 401,
      detail: anonymous.body.error.message,
    });
    const viewer = { authorization: `Bearer ${token.body.token}` };
    const refused = await change(0, 'POST', '/providers', { name: 'mistral', keys: [] }, viewer);
    expect(refused.status).toBe(403);
    expect(await recordOf(refused.requestId)).toMatchObject({
      actor: `token:${token.body.id}`,
      role: 'viewer',
      action: 'access_denied',
      target: 'POST /api/providers',
      status: 403,
      detail: expect.stringContaining('providers:write'),
    });
    // A Viewer reads the audit log (audit:read), and sees what an Admin sees: records hold no secret to hide.
    const asViewer = await get(on(1, `/audit-logs?request_id=${refused.requestId}`), viewer);
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.records).toEqual([await recordOf(refused.requestId)]);
  });

  it('filters by actor, action, target prefix, status, request id and time, and pages by seq', async () => {
    const records = await all();
    const expectSelects = async (query: string, predicate: (record: AuditRecord) => boolean) => {
      const selected = await all(`&${query}`);
      expect({ query, seqs: selected.map((record) => record.seq) }).toEqual({
        query,
        seqs: records.filter(predicate).map((record) => record.seq),
      });
      expect(selected.length).toBeGreaterThan(0);
    };
    await expectSelects(
      'actor=bootstrap&action=delete',
      (r) => r.actor === 'bootstrap' && r.action === 'delete',
    );
    await expectSelects('action=access_denied', (r) => r.action === 'access_denied');
    await expectSelects(`target_prefix=${encodeURIComponent('PATCH /api/governance/')}`, (r) =>
      r.target.startsWith('PATCH /api/governance/'),
    );
    await expectSelects('status=403', (r) => r.status === 403);
    await expectSelects(
      `request_id=${records[2]!.request_id}`,
      (r) => r.request_id === records[2]!.request_id,
    );
    const third = (await get(on(0, `/audit-logs/${records[2]!.seq}`), ADMIN)).body as AuditRecord & {
      time: number;
    };
    await expectSelects(
      `from=${third.time}`,
      (r) => (r as AuditRecord & { time: number }).time >= third.time,
    );
    const page = await get(on(1, '/audit-logs?limit=2'), ADMIN);
    expect(page.body.records.map((record: AuditRecord) => record.seq)).toEqual([
      records.at(-1)!.seq,
      records.at(-2)!.seq,
    ]);
    const next = await get(on(0, `/audit-logs?limit=2&cursor=${page.body.next_cursor}`), ADMIN);
    expect(next.body.records[0].seq).toBe(records.at(-3)!.seq);
    const bad = await get(on(0, '/audit-logs?status=abc'), ADMIN);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('status');
  });

  it('appends from every admin replica at once into one chain', async () => {
    const key = await change(0, 'POST', '/governance/virtual-keys', { name: 'busy-key' });
    secrets.push(key.body.value);
    const changes = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        change(index, 'PATCH', `/governance/virtual-keys/${key.body.id}`, { name: `busy-${index}` }),
      ),
    );
    expect(changes.map((answer) => answer.status)).toEqual(changes.map(() => 200));
    for (const answer of changes) await recordOf(answer.requestId, 0);
    const verified = await get(on(1, '/audit-logs/verify'), ADMIN);
    const records = await all();
    expect(verified.body).toEqual({ ok: true, records: records.length, head: records.at(-1)!.hash });
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
  });

  // This case and the next run the verify command, a process of its own: seconds apiece on a busy machine.
  it('exports JSON lines whose chain the verify command accepts, and names the record edited in a copy', {
    timeout: scaled(30_000),
  }, async () => {
    const response = await fetch(on(1, '/audit-logs/export'), { headers: ADMIN });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    const text = await response.text();
    for (const secret of secrets) expect(text).not.toContain(secret);
    const lines = text.trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as AuditRecord);
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index + 1));
    expect(records).toEqual(await all());
    const file = join(scratch, `${mode}-export.jsonl`);
    await writeFile(file, text);
    const accepted = await verifyCommand('--file', file);
    expect(accepted).toEqual({
      code: 0,
      output: `OK: ${records.length} records, the chain is intact (head ${records.at(-1)!.hash})\n`,
    });

    // The same export with one record's after changed (the key's name), everything else as it was.
    const edited = records.findIndex(
      (record) => record.action === 'update' && record.after?.name === 'renamed-key',
    );
    const tampered = [...lines];
    tampered[edited] = lines[edited]!.replace('"renamed-key"', '"innocent-key"');
    expect(tampered[edited]).not.toBe(lines[edited]);
    await writeFile(file, `${tampered.join('\n')}\n`);
    const refused = await verifyCommand('--file', file);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(`BROKEN at record ${records[edited]!.seq} (edited)`);

    // A filtered export is a part of the chain: the command says where it stops being whole.
    const filtered = await (
      await fetch(on(0, '/audit-logs/export?action=access_denied'), { headers: ADMIN })
    ).text();
    expect(
      filtered
        .trimEnd()
        .split('\n')
        .every((line) => JSON.parse(line).action === 'access_denied'),
    ).toBe(true);
    await writeFile(file, filtered);
    const kept = filtered
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).seq as number);
    const gap = kept.findIndex((seq, index) => seq !== index + 1) + 1;
    expect(gap).toBeGreaterThan(0);
    expect((await verifyCommand('--file', file)).output).toContain(`BROKEN at record ${gap} (missing)`);
  });

  it('names a record edited in the database itself: /api/audit-logs/verify and the verify command exit 1', {
    timeout: scaled(30_000),
  }, async () => {
    const records = await all();
    const target = records.find(
      (record) => record.action === 'create' && record.target === 'POST /api/providers',
    )!;
    const statement = `UPDATE audit_log SET "after" = '{"name":"nothing-to-see"}' WHERE "seq" = ${target.seq}`;
    let command: string[];
    if (mode === 'embedded') {
      const dataDir = (gateway as LaunchedGateway & { dataDir: string }).dataDir;
      const file = new DatabaseSync(join(dataDir, 'audit-log.sqlite'));
      file.exec('PRAGMA busy_timeout = 5000');
      file.exec(statement);
      file.close();
      command = ['--sqlite', dataDir];
    } else {
      await database!.sql(statement);
      command = ['--postgres', database!.url];
    }
    const verified = await get(on(0, '/audit-logs/verify'), ADMIN);
    expect(verified.body).toMatchObject({
      ok: false,
      seq: target.seq,
      reason: 'edited',
      records: target.seq - 1,
    });
    const result = await verifyCommand(...command);
    expect(result.code).toBe(1);
    expect(result.output).toContain(`BROKEN at record ${target.seq} (edited)`);
    // Appends go on after a tampered record (the log records; the check reports).
    const later = await change(1, 'POST', '/tokens', { name: 'after-tampering', role: 'viewer' });
    expect(later.status).toBe(201);
    expect(await recordOf(later.requestId, 0)).toMatchObject({
      action: 'create',
      after: { token: '[redacted]' },
    });
  });
});

describe('audit log (cluster without GW_LOGS_DATABASE_URL)', () => {
  let gateway: LaunchedGateway;
  beforeAll(async () => {
    gateway = await startCluster({ config: CONFIG, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 });
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('answers 503 naming the variable, and changes still work unrecorded', async () => {
    for (const path of ['/audit-logs', '/audit-logs/export', '/audit-logs/verify', '/audit-logs/1']) {
      const answer = await get(`${gateway.adminUrl}/api${path}`, ADMIN);
      expect(answer.status).toBe(503);
      expect(answer.body.error.message).toContain('GW_LOGS_DATABASE_URL');
    }
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/virtual-keys`,
      { name: 'k' },
      ADMIN,
    );
    expect(created.status).toBe(201);
  });
});
