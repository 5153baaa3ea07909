// Retries, key rotation, fallbacks, and bad input answered with the gateway error body.
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { scaled } from '@gw/testkit';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { expectGatewayError, get, type Json, post } from '../support/http.ts';
import { hello, MAX_BODY_BYTES, type ModeContext, requests, UPSTREAM_KEY } from './context.ts';

const run = promisify(execFile);

export function failureCases(mode: ModeContext): void {
  const { chat } = requests(mode);

  describe('retries', () => {
    it('retries transient 500s and succeeds', async () => {
      const failure = { status: 500, json: { error: { message: 'boom', type: 'server_error' } } };
      mode.fakes.primary.enqueue(failure, failure);
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(200);
      expect(answer.body.choices[0].message.content).toBe('Hello from the fake upstream');
      expect(mode.fakes.primary.requests).toHaveLength(3);
    });

    it('retries a 429 with retry-after: 0', async () => {
      mode.fakes.primary.enqueue({
        status: 429,
        json: { error: { message: 'Rate limit reached', type: 'requests' } },
        headers: { 'retry-after': '0' },
      });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(200);
      expect(mode.fakes.primary.requests).toHaveLength(2);
    });

    it('fails at once on a permanent 400 and keeps the upstream message', async () => {
      mode.fakes.primary.enqueue({
        status: 400,
        json: { error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error' } },
      });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(400);
      expect(mode.fakes.primary.requests).toHaveLength(1);
      expect(answer.body).toMatchObject({
        error: { type: 'upstream_error', message: "Invalid value for 'temperature'" },
        status_code: 400,
        is_gateway_error: false,
        request_id: expect.any(String),
        extra_fields: { provider: 'openai', model: 'gpt-4o-mini' },
      });
    });

    it('answers the upstream status when retries are exhausted', async () => {
      const unavailable = { status: 503, json: { error: { message: 'overloaded' } } };
      mode.fakes.primary.enqueue(unavailable, unavailable, unavailable);
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(503);
      expect(answer.body.error.message).toBe('overloaded');
      expect(answer.body.is_gateway_error).toBe(false);
      expect(mode.fakes.primary.requests).toHaveLength(3);
    });

    it('retries a dropped upstream connection', async () => {
      mode.fakes.primary.enqueue({ destroy: true });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(200);
      expect(mode.fakes.primary.requests).toHaveLength(2);
    });

    it('does not retry a 401 when the provider has no other key', async () => {
      mode.fakes.primary.enqueue({ status: 401, json: { error: { message: 'Incorrect API key provided' } } });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toBe('Incorrect API key provided');
      expect(answer.body.is_gateway_error).toBe(false);
      expect(mode.fakes.primary.requests).toHaveLength(1);
    });

    it('answers 502 when the upstream answers an unexpected shape', async () => {
      const broken = { json: { choices: 'not a list' } };
      mode.fakes.primary.enqueue(broken, broken, broken);
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(502);
      expect(answer.body.error.type).toBe('upstream_error');
      expect(answer.body.error.message).toContain('openai');
      expect(answer.body.request_id).toEqual(expect.any(String));
    });

    it('rotates to the other key after a 401', async () => {
      mode.fakes.primary.enqueue({ status: 401, json: { error: { message: 'Incorrect API key provided' } } });
      const answer = await chat({ model: 'rotating/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(200);
      expect(answer.body.extra_fields.provider).toBe('rotating');
      const keys = mode.fakes.primary.requests.map((request) => request.headers.authorization);
      expect(keys).toHaveLength(2);
      expect(new Set(keys)).toEqual(new Set(['Bearer sk-rotating-a', 'Bearer sk-rotating-b']));
    });
  });

  describe('fallbacks', () => {
    it('answers from the fallback target when the primary fails', async () => {
      mode.fakes.primary.enqueue({ status: 400, json: { error: { message: 'model not available here' } } });
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        fallbacks: ['openai-backup/gpt-4o'],
      });
      expect(answer.status).toBe(200);
      expect(answer.body.extra_fields.provider).toBe('openai-backup');
      expect(mode.fakes.primary.requests).toHaveLength(1);
      expect(mode.fakes.backup.requests).toHaveLength(1);
      expect(mode.fakes.backup.last().headers.authorization).toBe('Bearer sk-backup-test');
      expect(mode.fakes.backup.last().body).toMatchObject({ model: 'gpt-4o', messages: hello });
      expect(mode.fakes.backup.last().body).not.toHaveProperty('fallbacks');
    });

    it('answers all_targets_failed when every target fails', async () => {
      mode.fakes.primary.enqueue({ status: 400, json: { error: { message: 'primary says no' } } });
      mode.fakes.backup.enqueue({ status: 400, json: { error: { message: 'backup says no' } } });
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        fallbacks: ['openai-backup/gpt-4o-mini'],
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error.type).toBe('all_targets_failed');
      expect(answer.body.error.message).toContain('primary says no');
      expect(answer.body.error.message).toContain('backup says no');
      expect(answer.body.request_id).toEqual(expect.any(String));
    });
  });

  describe('bounded fan-out', () => {
    const unavailable = { status: 503, json: { error: { message: 'overloaded' } } };

    it('refuses more fallbacks than client.max_fallbacks before any upstream call', async () => {
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        fallbacks: Array.from({ length: 100 }, () => 'openai-backup/gpt-4o'),
      });
      expectGatewayError(answer, { status: 400, type: 'invalid_request' });
      expect(answer.body.error.message).toBe(
        'fallbacks: 100 given, at most 5 are allowed (client.max_fallbacks)',
      );
      expect(mode.fakes.primary.requests).toHaveLength(0);
      expect(mode.fakes.backup.requests).toHaveLength(0);
    });

    it('stops at client.max_attempts upstream calls across targets and retries', async () => {
      // Six targets of three attempts each would be 18 calls; the request may make 10.
      mode.fakes.primary.enqueue(...Array(20).fill(unavailable));
      mode.fakes.backup.enqueue(...Array(20).fill(unavailable));
      try {
        const answer = await chat({
          model: 'openai/gpt-4o-mini',
          messages: hello,
          fallbacks: [
            'openai-backup/gpt-4o',
            'openai/gpt-4o',
            'openai-backup/gpt-4o',
            'openai/gpt-4o',
            'openai-backup/gpt-4o',
          ],
        });
        expect(answer.status).toBe(503);
        expect(answer.body.error.type).toBe('all_targets_failed');
        expect(mode.fakes.primary.requests.length + mode.fakes.backup.requests.length).toBe(10);
      } finally {
        mode.fakes.primary.dropQueued();
        mode.fakes.backup.dropQueued();
      }
    });

    it('relays at most 16 KiB of an upstream error body', async () => {
      const huge = 'x'.repeat(4 * 1024 * 1024);
      mode.fakes.primary.enqueue({
        status: 400,
        headers: { 'content-type': 'text/plain' },
        chunks: [Buffer.from(huge)],
      });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(400);
      expect(answer.body.error.type).toBe('upstream_error');
      expect(JSON.stringify(answer.body).length).toBeLessThan(20 * 1024);
      expect(answer.body.extra_fields.upstream_error).toBe('x'.repeat(16 * 1024));
    });
  });

  describe('secrets upstreams echo', () => {
    it('takes the provider key, and anything shaped like a key, out of a relayed upstream error', async () => {
      mode.fakes.primary.enqueue({
        status: 401,
        json: {
          error: {
            message: `Incorrect API key provided: ${UPSTREAM_KEY}. Try sk-proj-abcdefghijklmnopqrstuvwx instead.`,
            type: 'invalid_request_error',
            echoed_headers: { authorization: `Bearer ${UPSTREAM_KEY}`, 'x-aws': 'AKIAABCDEFGHIJKLMNOP' },
          },
        },
      });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(401);
      const text = JSON.stringify(answer.body);
      expect(text).not.toContain(UPSTREAM_KEY);
      expect(text).not.toContain('sk-proj-abcdefghijklmnopqrstuvwx');
      expect(text).not.toContain('AKIAABCDEFGHIJKLMNOP');
      expect(answer.body.error.message).toBe(
        'Incorrect API key provided: [redacted]. Try [redacted] instead.',
      );
      expect(answer.body.extra_fields.upstream_error.error.echoed_headers.authorization).toBe(
        'Bearer [redacted]',
      );
    });
  });

  describe('secrets upstreams echo, encoded', () => {
    it('takes the provider key out of a relayed error in base64 or spaced out', async () => {
      const base64 = Buffer.from(UPSTREAM_KEY).toString('base64');
      const inside = Buffer.from(`{"key":"${UPSTREAM_KEY}"}`).toString('base64url');
      const spaced = [...UPSTREAM_KEY].join(' ');
      mode.fakes.primary.enqueue({
        status: 401,
        json: {
          error: {
            message: `Incorrect API key: ${spaced}`,
            type: 'invalid_request_error',
            debug: { token_b64: base64, blob: inside, wrapped: UPSTREAM_KEY.replace('-', '-\n  ') },
          },
        },
      });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toBe('Incorrect API key: [redacted]');
      const debug = answer.body.extra_fields.upstream_error.error.debug;
      expect(debug.token_b64).not.toContain(base64.slice(0, 16));
      expect(Buffer.from(debug.blob.replace('[redacted]', ''), 'base64url').toString()).not.toContain(
        UPSTREAM_KEY,
      );
      expect(debug.wrapped).toBe('[redacted]');
    });
  });

  describe('bad input', () => {
    const good = { model: 'openai/gpt-4o-mini', messages: hello };
    const cases: Array<{
      name: string;
      body: unknown;
      raw?: boolean;
      status: number;
      type: string;
      message: RegExp | string;
    }> = [
      {
        name: 'malformed JSON',
        body: '{"model": "openai/gpt-4o-mini",',
        raw: true,
        status: 400,
        type: 'invalid_request',
        message: /JSON/,
      },
      { name: 'an empty body', body: '', raw: true, status: 400, type: 'invalid_request', message: /empty/ },
      { name: 'a JSON array', body: [good], status: 400, type: 'invalid_request', message: /object/ },
      {
        name: 'missing model',
        body: { messages: hello },
        status: 400,
        type: 'invalid_request',
        message: /^model/,
      },
      {
        name: 'missing messages',
        body: { model: 'openai/gpt-4o-mini' },
        status: 400,
        type: 'invalid_request',
        message: /^messages/,
      },
      {
        name: 'empty messages',
        body: { model: 'openai/gpt-4o-mini', messages: [] },
        status: 400,
        type: 'invalid_request',
        message: /^messages/,
      },
      {
        name: 'model without provider',
        body: { model: 'gpt-4o', messages: hello },
        status: 400,
        type: 'invalid_request',
        message: /^model.*gpt-4o/,
      },
      {
        name: 'unknown provider',
        body: { model: 'nope/x', messages: hello },
        status: 400,
        type: 'unknown_provider',
        message: 'nope',
      },
      {
        name: 'provider not configured',
        body: { model: 'anthropic/claude', messages: hello },
        status: 400,
        type: 'provider_not_configured',
        message: 'anthropic',
      },
      {
        name: 'messages of the wrong type',
        body: { model: 'openai/gpt-4o-mini', messages: 'x' },
        status: 400,
        type: 'invalid_request',
        message: /^messages/,
      },
      {
        name: 'max_tokens of the wrong type',
        body: { ...good, max_tokens: 'many' },
        status: 400,
        type: 'invalid_request',
        message: /max_tokens/,
      },
      {
        name: 'temperature out of range',
        body: { ...good, temperature: 9 },
        status: 400,
        type: 'invalid_request',
        message: /temperature/,
      },
      {
        name: 'a message role that does not exist',
        body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'wizard', content: 'x' }] },
        status: 400,
        type: 'invalid_request',
        message: /messages\.0\.role/,
      },
      {
        name: 'params that is not an object',
        body: { ...good, params: 'x' },
        status: 400,
        type: 'invalid_request',
        message: /^params/,
      },
      {
        name: 'a body larger than max_request_body_bytes',
        body: { ...good, messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY_BYTES + 1024) }] },
        status: 413,
        type: 'payload_too_large',
        message: String(MAX_BODY_BYTES),
      },
    ];

    it.each(cases)('$name → $status $type, and the gateway keeps serving', async (testCase) => {
      const answer = await post(`${mode.base}/v1/chat/completions`, testCase.body, {
        raw: testCase.raw ?? false,
      });
      expectGatewayError(answer, testCase);
      expect(mode.fakes.primary.requests).toHaveLength(0);
      const after = await chat(good);
      expect(after.status).toBe(200);
    });

    it('answers a JSON error, not a stream, for a bad streaming request', async () => {
      const answer = await post(
        `${mode.base}/v1/chat/completions`,
        { model: 'nope/x', messages: hello, stream: true },
        {
          signal: AbortSignal.timeout(scaled(3_000)),
        },
      );
      expectGatewayError(answer, { status: 400, type: 'unknown_provider', message: 'nope' });
      expect((await chat(good)).status).toBe(200);
    });

    it('answers 413 for an oversized body sent without content-length', async () => {
      const piece = new TextEncoder().encode(
        `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"${'x'.repeat(16 * 1024)}`,
      );
      const filler = new TextEncoder().encode('x'.repeat(16 * 1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent += 1;
          if (sent === 1) controller.enqueue(piece);
          else if (sent <= 6) controller.enqueue(filler);
          else {
            controller.enqueue(new TextEncoder().encode('"}]}'));
            controller.close();
          }
        },
      });
      const response = await fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
        signal: AbortSignal.timeout(scaled(10_000)),
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(((await response.json()) as Json).error.type).toBe('payload_too_large');
      expect(mode.fakes.primary.requests).toHaveLength(0);
      expect((await chat(good)).status).toBe(200);
    });

    it('lets real clients read the 413 of an 11 MB upload still arriving (no EPIPE), then serves the next', async () => {
      const big = Buffer.alloc(11 * 1024 * 1024, 0x61);
      const slices = function* () {
        for (let offset = 0; offset < big.length; offset += 64 * 1024)
          yield big.subarray(offset, offset + 64 * 1024);
      };
      const agent = new Agent({ connections: 1 });
      try {
        for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/files', '/v1/nope']) {
          for (const body of [big, Readable.from(slices())]) {
            const answer = await request(`${mode.base}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
              dispatcher: agent,
              signal: AbortSignal.timeout(scaled(20_000)),
            });
            const text = await answer.body.text();
            const what = `${path} ${Buffer.isBuffer(body) ? 'content-length' : 'chunked'}`;
            expect(answer.statusCode, what).toBe(path === '/v1/nope' ? 404 : 413);
            if (answer.statusCode === 413)
              expect(JSON.parse(text).error.type, what).toBe('payload_too_large');
          }
        }
        // The same connection (one per agent) serves the next request.
        const next = await request(`${mode.base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(good),
          dispatcher: agent,
        });
        expect(next.statusCode).toBe(200);
        await next.body.text();
      } finally {
        await agent.close();
      }
      // curl, which sends the whole body before it reads (Expect: 100-continue turned off).
      const file = join(tmpdir(), `gw-413-${process.pid}.json`);
      await writeFile(file, big);
      try {
        const { stdout } = await run('curl', [
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          'Expect:',
          '-H',
          'content-type: application/json',
          '--data-binary',
          `@${file}`,
          `${mode.base}/v1/chat/completions`,
        ]);
        expect(stdout).toBe('413');
      } finally {
        await rm(file, { force: true });
      }
    });

    it('names the field of a wrong type in param', async () => {
      const answer = await chat({ ...good, max_tokens: 'many' });
      expect(answer.body.error.param).toBe('max_tokens');
      const nested = await chat({ ...good, params: { temperature: 9 } });
      expect(nested.body.error.param).toBe('params.temperature');
      expect(nested.body.error.message).toMatch(/^params\.temperature/);
    });

    it('answers 405 for GET on a POST route', async () => {
      const answer = await get(`${mode.base}/v1/chat/completions`);
      expectGatewayError(answer, { status: 405, type: 'method_not_allowed', message: 'POST' });
      expect((await chat(good)).status).toBe(200);
    });

    it('answers 404 for an unknown path', async () => {
      const answer = await post(`${mode.base}/v1/does-not-exist`, good);
      expectGatewayError(answer, { status: 404, type: 'not_found', message: '/v1/does-not-exist' });
      expect((await chat(good)).status).toBe(200);
    });
  });
}
