// /health, /metrics and the admin API (provider CRUD, redaction, hot reload on every replica).
import type { FakeOpenAi } from '@gw/testkit';
import { scaled, waitFor } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { call, get, type Json, post } from '../support/http.ts';
import { admin, hello, type ModeContext, network, requests, UPSTREAM_KEY } from './context.ts';

export function operationsCases(mode: ModeContext): void {
  const { chat } = requests(mode);

  describe('operations', () => {
    it('answers /health', async () => {
      for (const url of mode.gateway.urls) {
        const answer = await get(`${url}/health`);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ status: 'ok' });
      }
    });

    it('answers /health/ready (a cluster ingress: its router and its store answer) and /health/live', async () => {
      for (const url of mode.gateway.urls) {
        const ready = await get(`${url}/health/ready`);
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({
          status: 'ready',
          checks: mode.gateway.mode === 'cluster' ? { router: 'ok', store: 'ok' } : {},
        });
        const live = await get(`${url}/health/live`);
        expect(live.status).toBe(200);
        expect(live.body).toMatchObject({ status: 'live' });
      }
    });

    it('serves concurrent requests on every ingress replica', async () => {
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, index) =>
          post(`${mode.gateway.urls[index % mode.gateway.urls.length]}/v1/chat/completions`, {
            model: 'openai/gpt-4o-mini',
            messages: [{ role: 'user', content: `request ${index}` }],
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
      const contents = mode.fakes.primary.requests.map(
        (request) => (request.body as Json).messages[0].content,
      );
      expect(new Set(contents).size).toBe(24);
    });

    it('exposes request, latency, memory and provider health metrics', async () => {
      expect((await chat({ model: 'openai/gpt-4o-mini', messages: hello })).status).toBe(200);
      // Provider health comes from a router replica; poll so that every replica has had a say.
      const text = await waitFor(
        async () => {
          const response = await fetch(`${mode.base}/metrics`, {
            signal: AbortSignal.timeout(scaled(5_000)),
          });
          const body = await response.text();
          return response.status === 200 && /gw_provider_health\{[^}]*provider="openai"/.test(body)
            ? body
            : undefined;
        },
        { timeoutMs: 3_000, what: 'gw_provider_health for openai' },
      );
      expect(text).toMatch(/gw_requests_total\{[^}]*route="\/v1\/chat\/completions"[^}]*\}/);
      expect(text).toMatch(/gw_requests_total\{[^}]*provider="openai"[^}]*\}/);
      expect(text).toMatch(/gw_request_duration_seconds_bucket\{/);
      expect(text).toMatch(/gw_process_resident_memory_bytes|gw_nodejs_heap_size_used_bytes/);
      expect(text).not.toContain(UPSTREAM_KEY);
    });
  });

  describe('admin API', () => {
    const api = (path = '') => `${mode.gateway.adminUrl}/api/providers${path}`;

    it('refuses callers without the admin token', async () => {
      const anonymous = await get(api());
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.type).toBe('unauthorized');
      const wrong = await get(api(), { authorization: 'Bearer not-the-token' });
      expect(wrong.status).toBe(401);
      const wrongPost = await call('POST', api(), { name: 'sneaky' }, { authorization: 'Bearer nope' });
      expect(wrongPost.status).toBe(401);
    });

    it('lists providers with key values redacted', async () => {
      const answer = await get(api(), admin);
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body)).not.toContain(UPSTREAM_KEY);
      expect(JSON.stringify(answer.body)).not.toContain('sk-rotating-a');
      const openai = (answer.body as Json[]).find((provider) => provider.name === 'openai');
      expect(openai).toBeDefined();
      expect(openai.network_config.base_url).toBe(mode.fakes.primary.url);
      expect(openai.keys).toHaveLength(1);
      expect(openai.keys[0].value).not.toBe(UPSTREAM_KEY);
      expect(openai.keys[0].value).toEqual(expect.any(String));
    });

    it('creates, reads, updates and deletes a custom provider', async () => {
      const created = await call(
        'POST',
        api(),
        {
          name: 'crud-test',
          keys: [{ value: 'sk-crud-secret-value' }],
          network_config: network(mode.fakes.second.url),
          custom_provider_config: { base_provider: 'openai' },
        },
        admin,
      );
      expect(created.status).toBe(201);
      expect(created.body.name).toBe('crud-test');
      expect(JSON.stringify(created.body)).not.toContain('sk-crud-secret-value');

      // Usable at once, with the real secret upstream.
      const used = await chat({ model: 'crud-test/gpt-4o-mini', messages: hello });
      expect(used.status).toBe(200);
      expect(used.body.extra_fields.provider).toBe('crud-test');
      expect(mode.fakes.second.last().headers.authorization).toBe('Bearer sk-crud-secret-value');

      const read = await get(api('/crud-test'), admin);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        name: 'crud-test',
        custom_provider_config: { base_provider: 'openai' },
      });
      expect(JSON.stringify(read.body)).not.toContain('sk-crud-secret-value');

      const updated = await call(
        'PUT',
        api('/crud-test'),
        { ...read.body, network_config: { ...read.body.network_config, timeout_ms: 12_345 } },
        admin,
      );
      expect(updated.status).toBe(200);
      expect(updated.body.network_config.timeout_ms).toBe(12_345);

      const duplicate = await call(
        'POST',
        api(),
        { name: 'crud-test', custom_provider_config: { base_provider: 'openai' } },
        admin,
      );
      expect(duplicate.status).toBe(409);

      const deleted = await call('DELETE', api('/crud-test'), undefined, admin);
      expect(deleted.status).toBe(200);
      expect((await get(api('/crud-test'), admin)).status).toBe(404);
      expect((await call('DELETE', api('/crud-test'), undefined, admin)).status).toBe(404);
      const putMissing = await call(
        'PUT',
        api('/crud-test'),
        { custom_provider_config: { base_provider: 'openai' } },
        admin,
      );
      expect(putMissing.status).toBe(404);
      const gone = await waitFor(
        async () => {
          const answer = await chat({ model: 'crud-test/gpt-4o-mini', messages: hello });
          return answer.status === 400 ? answer : undefined;
        },
        { timeoutMs: 2_000, what: 'the deleted provider to be gone on every replica' },
      );
      expect(gone.body.error.type).toBe('unknown_provider');
    });

    it('keeps the stored secret when an update sends the redacted value back', async () => {
      const read = await get(api('/openai'), admin);
      expect(read.status).toBe(200);
      const updated = await call(
        'PUT',
        api('/openai'),
        { ...read.body, network_config: { ...read.body.network_config, timeout_ms: 30_000 } },
        admin,
      );
      expect(updated.status).toBe(200);
      expect(JSON.stringify(updated.body)).not.toContain(UPSTREAM_KEY);
      // A hand-written update that repeats the listed (redacted) value without the key id.
      const handWritten = await call(
        'PUT',
        api('/openai'),
        { keys: [{ value: read.body.keys[0].value }], network_config: read.body.network_config },
        admin,
      );
      expect(handWritten.status).toBe(200);
      for (const url of mode.gateway.urls) {
        for (let attempt = 0; attempt < 2; attempt++) {
          mode.fakes.primary.requests.length = 0;
          const answer = await post(`${url}/v1/chat/completions`, {
            model: 'openai/gpt-4o-mini',
            messages: hello,
          });
          expect(answer.status).toBe(200);
          expect(mode.fakes.primary.last().headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
        }
      }
    });

    it('masks custom auth headers like keys, and keeps them when a read is written back', async () => {
      const created = await call(
        'POST',
        api(),
        {
          name: 'custom-auth',
          keys: [{ value: 'sk-custom-auth-key-0000' }],
          network_config: {
            ...network(mode.fakes.second.url),
            extra_headers: { 'x-api-key': 'header-secret-0123456789', 'x-team': 'platform' },
          },
          custom_provider_config: { base_provider: 'openai' },
        },
        admin,
      );
      expect(created.status).toBe(201);
      const read = await get(api('/custom-auth'), admin);
      expect(JSON.stringify(read.body)).not.toContain('header-secret-0123456789');
      expect(read.body.network_config.extra_headers).toEqual({
        'x-api-key': 'hea****6789',
        'x-team': 'platform',
      });
      expect((await call('PUT', api('/custom-auth'), read.body, admin)).status).toBe(200);
      mode.fakes.second.requests.length = 0;
      await waitFor(
        async () => (await chat({ model: 'custom-auth/gpt-4o-mini', messages: hello })).status === 200,
        { timeoutMs: 2_000, what: 'the provider on every replica' },
      );
      expect(mode.fakes.second.last().headers['x-api-key']).toBe('header-secret-0123456789');
      expect((await call('DELETE', api('/custom-auth'), undefined, admin)).status).toBe(200);
    });

    /** A token of a role with providers:read|write alone: references need secrets:reference, which Admin holds. */
    let providerWriter: Record<string, string> | undefined;
    const writer = async () => {
      if (providerWriter) return providerWriter;
      const roles = `${mode.gateway.adminUrl}/api/roles`;
      const permissions = ['providers:read', 'providers:write'];
      await call('POST', roles, { id: 'provider-writer', permissions }, admin);
      const token = await call(
        'POST',
        `${mode.gateway.adminUrl}/api/tokens`,
        { name: 'pw', role: 'provider-writer' },
        admin,
      );
      providerWriter = { authorization: `Bearer ${token.body.token}` };
      return providerWriter;
    };

    it.each<[Json, string, string]>([
      [{ keys: [{ value: 'env.GATEWAY_ADMIN_TOKEN' }] }, 'keys[0].value', 'secrets:reference'],
      [
        { keys: [{ value: 'k', config: { token: 'env.HOME' } }] },
        'keys[0].config.token',
        'secrets:reference',
      ],
      [
        { network_config: { base_url: 'file:///etc/passwd' } },
        'network_config.base_url',
        'http:// or https://',
      ],
      [
        { network_config: { base_url: 'http://169.254.169.254/latest' } },
        'network_config.base_url',
        'metadata',
      ],
      [{ network_config: { base_url: 'http://[fd00:ec2::254]/' } }, 'network_config.base_url', 'metadata'],
      [
        { network_config: { base_url: 'http://metadata.google.internal/' } },
        'network_config.base_url',
        'metadata',
      ],
    ])('refuses a provider written through the API with %j', async (fields, param, words) => {
      const answer = await call(
        'POST',
        api(),
        {
          name: 'exfiltrate',
          keys: [{ value: 'sk-plain-value-0000' }],
          custom_provider_config: { base_provider: 'openai' },
          ...fields,
          network_config: { base_url: mode.fakes.second.url, ...fields.network_config },
        },
        fields.keys ? await writer() : admin,
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.type).toBe('invalid_request');
      expect(answer.body.error.message).toContain(param);
      expect(answer.body.error.message).toContain(words);
      expect((await get(api('/exfiltrate'), admin)).status).toBe(404);
    });

    it('rejects an invalid provider config naming the field', async () => {
      const badUrl = await call(
        'POST',
        api(),
        {
          name: 'bad-url',
          network_config: { base_url: 'not a url' },
          custom_provider_config: { base_provider: 'openai' },
        },
        admin,
      );
      expect(badUrl.status).toBe(400);
      expect(badUrl.body.error.type).toBe('invalid_request');
      expect(badUrl.body.error.message).toContain('network_config.base_url');

      const badRetries = await call(
        'PUT',
        api('/openai'),
        {
          keys: [{ value: UPSTREAM_KEY }],
          network_config: { base_url: mode.fakes.primary.url, max_retries: 'three' },
        },
        admin,
      );
      expect(badRetries.status).toBe(400);
      expect(badRetries.body.error.message).toContain('network_config.max_retries');

      const noName = await call('POST', api(), { keys: [] }, admin);
      expect(noName.status).toBe(400);
      expect(noName.body.error.message).toContain('name');

      // Nothing changed: the provider still answers.
      expect((await chat({ model: 'openai/gpt-4o-mini', messages: hello })).status).toBe(200);
    });

    it.each([
      ['upper case and a space', 'Bad Name'],
      ['a slash (never addressable as <provider>/<model>)', 'team/openai'],
      ['a path', '../../etc'],
      ['300 characters', 'p'.repeat(300)],
    ])('rejects a provider name with %s, as the config file does', async (_why, name) => {
      const answer = await call(
        'POST',
        api(),
        {
          name,
          network_config: { base_url: mode.fakes.second.url },
          custom_provider_config: { base_provider: 'openai' },
        },
        admin,
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.type).toBe('invalid_request');
      expect(answer.body.error.message).toContain('name');
      const listed = await get(api(), admin);
      expect((listed.body as Json[]).map((provider) => provider.name)).not.toContain(name);
    });

    it('applies a provider change on every ingress and router replica without a restart', async () => {
      const created = await call(
        'POST',
        api(),
        {
          name: 'hot-reload',
          keys: [{ value: 'sk-hot-reload' }],
          network_config: network(mode.fakes.primary.url),
          custom_provider_config: { base_provider: 'openai' },
        },
        admin,
      );
      expect(created.status).toBe(201);
      const body = { model: 'hot-reload/gpt-4o-mini', messages: hello };
      // Every ingress, several requests each (router replicas are balanced round-robin).
      const reachesEverywhere = async (fake: FakeOpenAi) => {
        for (const url of mode.gateway.urls) {
          for (let attempt = 0; attempt < 3; attempt++) {
            fake.requests.length = 0;
            const answer = await post(`${url}/v1/chat/completions`, body);
            if (answer.status !== 200 || fake.requests.length !== 1) return false;
          }
        }
        return true;
      };
      await waitFor(() => reachesEverywhere(mode.fakes.primary), {
        timeoutMs: 2_000,
        what: 'the new provider on every replica',
      });

      const updated = await call(
        'PUT',
        api('/hot-reload'),
        {
          ...created.body,
          network_config: { ...created.body.network_config, base_url: mode.fakes.second.url },
        },
        admin,
      );
      expect(updated.status).toBe(200);
      expect(updated.body.network_config.base_url).toBe(mode.fakes.second.url);
      await waitFor(() => reachesEverywhere(mode.fakes.second), {
        timeoutMs: 2_000,
        what: 'the new base_url on every replica',
      });
      expect(mode.fakes.second.last().headers.authorization).toBe('Bearer sk-hot-reload');

      expect((await call('DELETE', api('/hot-reload'), undefined, admin)).status).toBe(200);
    });
  });
}
