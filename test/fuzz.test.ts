// Malformed input always gets a clear 4xx: a deterministic corpus (seeded) of broken bodies, wrong types for
// every field of a chat request, deep nesting, invalid UTF-8, wrong content types, oversized and random
// bodies, sent to every parsed endpoint of the embedded gateway. Every answer must be a 4xx with gw's JSON
// error body (or the surface's own error shape), none a 5xx, none missing, none hung; the gateway still
// answers a good request at the end.
import { type FakeOpenAi, type LaunchedGateway, scaled, startEmbedded, startFakeOpenAi } from '@gw/testkit';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ENDPOINTS = [
  '/v1/chat/completions',
  '/chat/completions',
  '/v1/text/completions',
  '/openai/v1/chat/completions',
  '/openai/v1/responses',
  '/anthropic/v1/messages',
  '/anthropic/v1/messages/count_tokens',
  '/genai/v1beta/models/gemini-2.5-flash:generateContent',
  '/bedrock/model/anthropic.claude-3-haiku/converse',
  '/v1/mcp/tool/execute',
];

/** A small deterministic PRNG (mulberry32), so the corpus is the same on every run. */
function prng(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Case {
  name: string;
  body: Buffer;
  contentType?: string;
}

const GOOD = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const WRONG_VALUES: unknown[] = [null, true, 0, -1, 1e308, 'x', '', [], {}, [[]], { a: 1 }, 'x'.repeat(3000)];

function corpus(): Case[] {
  const random = prng(20261123);
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const cases: Case[] = [];
  const good = JSON.stringify(GOOD);
  // Truncations of a good body at every 3rd byte.
  for (let cut = 0; cut < good.length; cut += 3)
    cases.push({ name: `truncated at ${cut}`, body: Buffer.from(good.slice(0, cut)) });
  // Every field of a chat request, and of a message, with values of the wrong type.
  for (const value of WRONG_VALUES) {
    cases.push({
      name: `model ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, model: value }),
    });
    cases.push({
      name: `messages ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, messages: value }),
    });
    cases.push({
      name: `role ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, messages: [{ role: value, content: 'x' }] }),
    });
    cases.push({
      name: `content ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, messages: [{ role: 'user', content: value }] }),
    });
    cases.push({
      name: `tools ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, tools: value }),
    });
    cases.push({
      name: `fallbacks ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, fallbacks: value }),
    });
    cases.push({
      name: `stream ${JSON.stringify(value)}`.slice(0, 60),
      body: json({ ...GOOD, stream: value === true ? 'yes' : value }),
    });
  }
  // Deep nesting, as arrays and as objects.
  for (const depth of [200, 10_000]) {
    cases.push({
      name: `arrays nested ${depth}`,
      body: Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`),
    });
    cases.push({
      name: `objects nested ${depth}`,
      body: Buffer.from(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
    });
    cases.push({
      name: `content nested ${depth}`,
      body: Buffer.from(
        `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":${'['.repeat(depth)}${']'.repeat(depth)}}]}`,
      ),
    });
  }
  // Deep nesting where the schema lets any value through (unknown params, tool schemas).
  const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  for (const depth of [200, 10_000]) {
    cases.push({
      name: `param nested ${depth}`,
      body: Buffer.from(`${good.slice(0, -1)},"metadata":${deep(depth)}}`),
    });
    cases.push({
      name: `tool schema nested ${depth}`,
      body: Buffer.from(
        `${good.slice(0, -1)},"tools":[{"type":"function","function":{"name":"f","parameters":${deep(depth)}}}]}`,
      ),
    });
  }
  // Invalid UTF-8 inside a JSON string, lone surrogates, a BOM.
  cases.push({
    name: 'invalid utf-8',
    body: Buffer.concat([
      Buffer.from('{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}]}'),
    ]),
  });
  cases.push({
    name: 'overlong utf-8',
    body: Buffer.concat([Buffer.from('{"model":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
  });
  // Not JSON at all, or not an object.
  for (const text of [
    '',
    ' ',
    'null',
    '[]',
    '"x"',
    '42',
    'true',
    '{',
    '}',
    '{"model":}',
    '{model:"x"}',
    "{'a':1}",
    '{"a":1,}',
    'NaN',
    '{"__proto__":{"x":1}}',
  ]) {
    cases.push({ name: `body ${JSON.stringify(text)}`, body: Buffer.from(text) });
  }
  // Wrong content types with a good body.
  for (const contentType of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
  ]) {
    cases.push({ name: `content-type ${contentType}`, body: Buffer.from(good), contentType });
  }
  // Random bytes.
  for (let index = 0; index < 60; index++) {
    const bytes = Buffer.alloc(1 + Math.floor(random() * 512));
    for (let at = 0; at < bytes.length; at++) bytes[at] = Math.floor(random() * 256);
    cases.push({ name: `random ${index}`, body: bytes });
  }
  // Oversized: past client.max_request_body_bytes (64 KiB in this gateway).
  cases.push({ name: 'oversized', body: Buffer.alloc(80 * 1024, 0x20) });
  return cases;
}

let fake: FakeOpenAi;
let gateway: LaunchedGateway;
const agent = new Agent({ connections: 8 });

beforeAll(async () => {
  fake = await startFakeOpenAi();
  gateway = await startEmbedded({
    config: {
      client: { max_request_body_bytes: 64 * 1024 },
      providers: {
        openai: { keys: [{ value: 'sk-fuzz' }], network_config: { base_url: fake.url, max_retries: 0 } },
      },
    },
  });
});
afterAll(async () => {
  await agent.close();
  await gateway?.close();
  await fake?.close();
});

it('answers every malformed request with a 4xx and an error body; no 5xx, none unanswered, none hung', {
  timeout: scaled(180_000),
}, async () => {
  const cases = corpus();
  const outcomes = { '4xx': 0, '2xx': 0, '5xx': 0, unanswered: 0 } as Record<string, number>;
  const failures: string[] = [];
  const send = async (endpoint: string, testCase: Case) => {
    try {
      const answer = await request(`${gateway.url}${endpoint}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': testCase.contentType ?? 'application/json' },
        body: testCase.body,
        signal: AbortSignal.timeout(scaled(10_000)),
      });
      const text = await answer.body.text();
      const status = answer.statusCode;
      if (status >= 500) {
        outcomes['5xx']!++;
        failures.push(`${status} ${endpoint} ${testCase.name}: ${text.slice(0, 200)}`);
      } else if (status >= 400) {
        outcomes['4xx']!++;
        let parsed: { error?: unknown; type?: string; message?: string } | undefined;
        try {
          parsed = JSON.parse(text);
        } catch {
          failures.push(`${status} ${endpoint} ${testCase.name}: not JSON: ${text.slice(0, 100)}`);
        }
        if (parsed && parsed.error === undefined && parsed.message === undefined) {
          failures.push(`${status} ${endpoint} ${testCase.name}: no error in ${text.slice(0, 100)}`);
        }
      } else {
        outcomes['2xx']!++;
      }
    } catch (error) {
      outcomes['unanswered']!++;
      failures.push(`unanswered ${endpoint} ${testCase.name}: ${(error as Error).message}`);
    }
  };
  for (const endpoint of ENDPOINTS) {
    for (let index = 0; index < cases.length; index += 8) {
      await Promise.all(cases.slice(index, index + 8).map((testCase) => send(endpoint, testCase)));
    }
  }
  const total = cases.length * ENDPOINTS.length;
  console.info(`fuzz: ${total} requests: ${JSON.stringify(outcomes)}`);
  expect(failures).toEqual([]);
  expect(outcomes['5xx']).toBe(0);
  expect(outcomes['unanswered']).toBe(0);
  // Still serving.
  const healthy = await request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(GOOD),
  });
  expect(healthy.statusCode).toBe(200);
  await healthy.body.text();
});
