import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogRecord, logRecordSchema } from '@gw/logs';
import { SqliteLogStore } from '@gw/logs/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeCaller } from '../../testing/admin-harness.ts';
import type { Principal } from '../access/admin-principal.ts';
import { createLogsAdmin } from './logs-admin.ts';

const logRecord = (fields: { id: string; team_id?: string }) =>
  logRecordSchema.parse({
    time: Date.now(),
    surface: 'openai',
    route: '/v1/chat/completions',
    status: 200,
    latency_ms: 5,
    ...fields,
  });

// A Developer (team-scoped) reads the request logs of its teams only; other roles read every team's.
const principal = (teamIds: string[], teamScoped = true): Principal => ({
  kind: 'token',
  roleId: teamScoped ? 'developer' : 'viewer',
  role: 'member',
  permissions: new Set(['logs:read']),
  teamScoped,
  teamIds,
  label: 'token:test',
});

describe('request logs of a team-scoped role', () => {
  let directory: string;
  let store: SqliteLogStore;
  let logs: ReturnType<typeof routeCaller>;
  const ask = (who: Principal, segments: string[], query = '') =>
    logs('GET', `/api/logs/${segments.join('/')}`, {
      role: who.role,
      principal: who,
      query: new URLSearchParams(query),
    });
  const ids = (answer: { body: unknown }) =>
    (answer.body as { records: LogRecord[] }).records.map((r) => r.id);

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gw-logs-admin-'));
    store = await SqliteLogStore.open({ dataDir: directory });
    await store.insert([
      logRecord({ id: 'red-1', team_id: 'red' }),
      logRecord({ id: 'blue-1', team_id: 'blue' }),
      logRecord({ id: 'none-1' }),
    ]);
    logs = routeCaller(createLogsAdmin({ store }));
  });
  afterAll(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('lists the records of its one team when it names none, and of a team it names among its own', async () => {
    expect(ids(await ask(principal(['red']), []))).toEqual(['red-1']);
    expect(ids(await ask(principal(['red', 'blue']), [], 'team_id=blue'))).toEqual(['blue-1']);
    expect(ids(await ask(principal([], false), [])).sort()).toEqual(['blue-1', 'none-1', 'red-1']);
  });

  it('is refused another team (403 team_scope), and asked to name one when it has several (400 team_id)', async () => {
    await expect(ask(principal(['red']), [], 'team_id=blue')).rejects.toMatchObject({
      status: 403,
      code: 'team_scope',
      param: 'team_id',
    });
    await expect(ask(principal(['red', 'blue']), [])).rejects.toMatchObject({
      status: 400,
      param: 'team_id',
    });
    await expect(ask(principal([]), [])).rejects.toMatchObject({ status: 403, code: 'team_scope' });
    await expect(ask(principal(['red']), ['stats'], 'team_id=blue')).rejects.toMatchObject({ status: 403 });
  });

  it('reads the dropped counts, which name no team (a reason and a minute)', async () => {
    expect((await ask(principal(['red']), ['dropped'])).body).toMatchObject({ totals: {} });
    expect((await ask(principal([]), ['dropped'])).body).toMatchObject({ buckets: [] });
  });

  it("answers 404 for another team's record, as for one that does not exist", async () => {
    expect((await ask(principal(['red']), ['red-1'])).body).toMatchObject({ id: 'red-1' });
    await expect(ask(principal(['red']), ['blue-1'])).rejects.toMatchObject({ status: 404 });
    await expect(ask(principal(['red']), ['none-1'])).rejects.toMatchObject({ status: 404 });
    expect((await ask(principal([], false), ['blue-1'])).body).toMatchObject({ id: 'blue-1' });
  });
});
