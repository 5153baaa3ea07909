// Embedded mode keeps its state in the data directory: nothing created through the API is
// lost on restart. Cluster mode keeps it in Redis, which outlives the processes by construction.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeOpenAi, startEmbedded, startFakeOpenAi } from '@gw/testkit';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'admin-token-for-tests';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let fake: FakeOpenAi;
let dataDir: string;

beforeEach(async () => {
  fake = await startFakeOpenAi();
  dataDir = await mkdtemp(join(tmpdir(), 'gw-persistence-'));
});

afterEach(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('keeps a provider created through the admin API across a restart', async () => {
  const config = { providers: { openai: { keys: [{ value: 'sk-upstream-test' }] } } };
  const first = await startEmbedded({ config, adminToken: ADMIN_TOKEN, dataDir });
  try {
    const created = await call(
      'POST',
      `${first.adminUrl}/api/providers`,
      {
        name: 'kept-provider',
        keys: [{ value: 'sk-kept-secret-value' }],
        network_config: { base_url: fake.url },
        custom_provider_config: { base_provider: 'openai' },
      },
      admin,
    );
    expect(created.status).toBe(201);
  } finally {
    await first.close();
  }

  const second = await startEmbedded({ config, adminToken: ADMIN_TOKEN, dataDir });
  try {
    const read = await get(`${second.adminUrl}/api/providers/kept-provider`, admin);
    expect(read.status).toBe(200);
    expect(read.body.network_config.base_url).toBe(fake.url);
    const answer = await post(`${second.url}/v1/chat/completions`, {
      model: 'kept-provider/gpt-4o-mini',
      messages: [{ role: 'user', content: 'still there?' }],
    });
    expect(answer.status).toBe(200);
    expect(fake.last().headers.authorization).toBe('Bearer sk-kept-secret-value');
  } finally {
    await second.close();
  }
});
