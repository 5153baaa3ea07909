// The audit log fails closed (issue 25 defect 5), in both modes: with its store unreachable (the cluster's
// PostgreSQL behind a TCP proxy that is stopped; the embedded SQLite file locked by another writer) a change
// through /api is refused with 503 and not made, reads go on, and once the store is back changes are made and
// recorded, the chain whole and in order. With `audit.on_store_failure: queue` (cluster) changes go on through
// the outage, each record held in a Redis stream before its answer, and every one reaches PostgreSQL, in
// order and each once (two admin replicas appending and draining), once it is back.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  freePort,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get } from './support/http.ts';

const ADMIN_TOKEN = 'audit-fail-closed-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A TCP proxy on a fixed port that can be stopped (connections refused, open ones cut) and started again. */
async function startStoppableProxy(target: { host: string; port: number }) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const up = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = connect(target);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await up();
  return { port, up, down };
}

interface Outage {
  /** Makes the audit store unreachable. */
  begin(): Promise<void>;
  /** Brings it back. */
  end(): Promise<void>;
}

interface Started {
  gateway: LaunchedGateway;
  outage: Outage;
  database?: TestDatabase | undefined;
}

async function cluster(config: GatewayConfigInput, admins = 1): Promise<Started> {
  const database = await createTestDatabase();
  const real = new URL(database.url);
  const proxy = await startStoppableProxy({ host: real.hostname, port: Number(real.port || 5432) });
  const proxied = new URL(database.url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const gateway = await startCluster({
    config,
    adminToken: ADMIN_TOKEN,
    replicas: { admin: admins },
    env: { GW_LOGS_DATABASE_URL: proxied.toString() },
    readyTimeoutMs: 60_000,
  });
  return { gateway, database, outage: { begin: proxy.down, end: proxy.up } };
}

async function embedded(config: GatewayConfigInput): Promise<Started> {
  const gateway = await startEmbedded({ config, adminToken: ADMIN_TOKEN });
  const file = join((gateway as LaunchedGateway & { dataDir: string }).dataDir, 'audit-log.sqlite');
  let writer: DatabaseSync | undefined;
  return {
    gateway,
    outage: {
      // Another writer holds the file's write lock (a backup tool, a stuck process): appends fail after
      // the store's busy timeout.
      async begin() {
        writer = new DatabaseSync(file);
        writer.exec('BEGIN IMMEDIATE');
      },
      async end() {
        writer?.exec('ROLLBACK');
        writer?.close();
        writer = undefined;
      },
    },
  };
}

interface AuditRecord {
  seq: number;
  action: string;
  target: string;
  status: number;
  request_id: string;
}

const MODES = [
  ['embedded', embedded],
  ['cluster', cluster],
] as const;

describe.each(MODES)('audit fails closed (%s, on_store_failure: refuse)', (_mode, start) => {
  let started: Started;
  const admin = () => started.gateway.adminUrl;
  const records = async () =>
    (await get(`${admin()}/api/audit-logs?order=asc&limit=1000`, ADMIN)).body.records as AuditRecord[];

  beforeAll(async () => {
    started = await start({});
  }, scaled(90_000));
  afterAll(async () => {
    await started?.outage.end();
    await started?.gateway.close();
    await started?.database?.drop();
  });

  it('refuses a change with 503 while the store is down, makes nothing, answers reads, and records in order once back', {
    timeout: scaled(60_000),
  }, async () => {
    const before = await call('POST', `${admin()}/api/governance/teams`, { name: 'before-outage' }, ADMIN);
    expect(before.status).toBe(201);

    await started.outage.begin();
    const refused = await call('POST', `${admin()}/api/governance/teams`, { name: 'during-outage' }, ADMIN);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('audit_unavailable');
    expect(refused.body.error.message).toContain('this change was not made');
    const removal = await call(
      'DELETE',
      `${admin()}/api/governance/teams/${before.body.id}`,
      undefined,
      ADMIN,
    );
    expect(removal.status).toBe(503);
    // Reads are not audited: they go on.
    const teams = await get(`${admin()}/api/governance/teams`, ADMIN);
    expect(teams.status).toBe(200);
    expect(teams.body.map((team: { name: string }) => team.name)).toEqual(['before-outage']);
    await started.outage.end();

    const after = await waitFor(
      async () => {
        const answer = await call('POST', `${admin()}/api/governance/teams`, { name: 'after-outage' }, ADMIN);
        return answer.status === 201 ? answer : undefined;
      },
      { timeoutMs: 20_000, what: 'a change accepted once the audit store is back' },
    );
    const stored = await waitFor(
      async () => {
        const all = await records();
        return all.some((record) => record.request_id === after.headers.get('x-request-id'))
          ? all
          : undefined;
      },
      { timeoutMs: 10_000, what: 'the record of the change after the outage' },
    );
    const changes = stored.filter((record) => record.action !== 'access_denied');
    expect(changes.map((record) => [record.action, record.target, record.status])).toEqual([
      ['create', 'POST /api/governance/teams', 201],
      ['create', 'POST /api/governance/teams', 201],
    ]);
    expect(stored.map((record) => record.seq)).toEqual(stored.map((_, index) => index + 1));
    const verified = await get(`${admin()}/api/audit-logs/verify`, ADMIN);
    expect(verified.body).toMatchObject({ ok: true, records: stored.length });
  });
});

describe('audit queued through a PostgreSQL outage (cluster, on_store_failure: queue)', () => {
  let started: Started;
  const admin = () => started.gateway.adminUrl;
  const records = async () =>
    (await get(`${admin()}/api/audit-logs?order=asc&limit=1000`, ADMIN)).body.records as AuditRecord[];

  beforeAll(async () => {
    // Two admin replicas: both append to the queue and both drain it.
    started = await cluster({ audit: { on_store_failure: 'queue' } }, 2);
  }, scaled(90_000));
  afterAll(async () => {
    await started?.outage.end();
    await started?.gateway.close();
    await started?.database?.drop();
  });

  it('answers changes through the outage with each record held in Redis, and writes them all in order once back', {
    timeout: scaled(90_000),
  }, async () => {
    const first = await call('POST', `${admin()}/api/governance/teams`, { name: 'queued-0' }, ADMIN);
    expect(first.status).toBe(201);
    const changes = async () => (await records()).filter((record) => record.action !== 'access_denied');
    await waitFor(async () => ((await changes()).length === 1 ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the first record in PostgreSQL',
    });

    await started.outage.begin();
    const answered: string[] = [first.headers.get('x-request-id')!];
    for (let index = 1; index <= 5; index += 1) {
      const replica = started.gateway.adminUrls[index % 2]!;
      const made = await call('POST', `${replica}/api/governance/teams`, { name: `queued-${index}` }, ADMIN);
      expect(made.status).toBe(201);
      answered.push(made.headers.get('x-request-id')!);
    }
    const refused = await get(`${admin()}/api/audit-logs`, ADMIN);
    expect(refused.status).toBeGreaterThanOrEqual(500);
    await started.outage.end();

    const stored = await waitFor(
      async () => {
        const all = await changes().catch(() => []);
        return all.length >= answered.length ? all : undefined;
      },
      { timeoutMs: 30_000, what: 'every queued record in PostgreSQL' },
    );
    expect(stored.map((record) => record.request_id)).toEqual(answered);
    // Both replicas at once, both draining: each record once.
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        call(
          'POST',
          `${started.gateway.adminUrls[index % 2]}/api/governance/teams`,
          { name: `burst-${index}` },
          ADMIN,
        ),
      ),
    );
    expect(burst.map((answer) => answer.status)).toEqual(burst.map(() => 201));
    const ids = [...answered, ...burst.map((answer) => answer.headers.get('x-request-id')!)];
    const everything = await waitFor(
      async () => {
        const all = await changes();
        return all.length >= ids.length ? all : undefined;
      },
      { timeoutMs: 20_000, what: 'the burst in PostgreSQL' },
    );
    expect(everything.map((record) => record.request_id).sort()).toEqual([...ids].sort());
    const all = await records();
    expect(all.map((record) => record.seq)).toEqual(all.map((_, index) => index + 1));
    expect((await get(`${admin()}/api/audit-logs/verify`, ADMIN)).body).toMatchObject({
      ok: true,
      records: all.length,
    });
  });
});
