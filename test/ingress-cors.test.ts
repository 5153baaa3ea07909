// CORS on the inference API (client.cors_allowed_origins, docs/ui.md), both modes: a page of an allowed origin
// gets its preflight answered with the route's methods and may read an answer and gw's headers on it; any other
// origin gets no CORS header and no 2xx preflight, so its browser holds the call back. The setting is a system
// setting: changed through /api/config it applies live, refused when it is not a list of origins, and with the
// list empty the ingress adds nothing.
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeUpstream,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/http.ts';
import {
  closeFakes,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from './surfaces/surface-gateway.ts';

const ADMIN_TOKEN = 'cors-admin-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CONSOLE = 'http://console.example:9080';
const EVIL = 'https://evil.example';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  ['cluster', (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN })],
] as const;

/**
 * An OpenAI upstream whose `/v1/models` answers with CORS headers of its own (as hosted APIs do): gw relays that
 * answer, and who may read it is still gw's setting. Anything else is a chat completion.
 */
function startCorsUpstream(): Promise<FakeUpstream> {
  return startFakeUpstream([
    {
      path: /^\/v1\/models$/,
      answer: () => ({
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': 'openai-organization',
          vary: 'Accept-Encoding',
        },
        json: { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] },
      }),
    },
    { path: /./, answer: () => ({ json: chatCompletion() }) },
  ]);
}

/** The CORS headers of an answer (every `access-control-*` one), by name. */
function corsHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
}

describe.each(MODES)('CORS on the inference API (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let openai: FakeUpstream;
  let gateway: LaunchedGateway;

  const preflight = (path: string, origin: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
        ...headers,
      },
      signal: AbortSignal.timeout(scaled(10_000)),
    });

  const chat = (origin: string | undefined, content: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${VIRTUAL_KEY}`,
        'content-type': 'application/json',
        ...(origin && { origin }),
      },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }),
      signal: AbortSignal.timeout(scaled(10_000)),
    });

  const setOrigins = (origins: unknown) =>
    call('PUT', `${gateway.adminUrl}/api/config`, { client: { cors_allowed_origins: origins } }, ADMIN);

  beforeAll(async () => {
    [fakes, openai] = await Promise.all([startFakes(), startCorsUpstream()]);
    gateway = await start(surfaceConfig({ ...fakes, openai }, { cors_allowed_origins: [CONSOLE] }));
  }, scaled(90_000));

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([closeFakes(fakes), openai?.close()]);
  });

  const models = (origin: string) =>
    fetch(`${gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${VIRTUAL_KEY}`, origin },
      signal: AbortSignal.timeout(scaled(10_000)),
    });

  it('answers an allowed origin’s preflight 204 with the route’s methods, its headers and a max age', async () => {
    const answer = await preflight('/v1/chat/completions', CONSOLE);
    expect(answer.status).toBe(204);
    expect(corsHeaders(answer.headers)).toEqual({
      'access-control-allow-origin': CONSOLE,
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
    });
    expect(answer.headers.get('vary')).toBe('Origin');

    // A route of several methods names them all; requested headers that are not a list of names are not echoed.
    const files = await preflight('/v1/files/file-abc', CONSOLE, {
      'access-control-request-method': 'DELETE',
      'access-control-request-headers': 'authorization, x-evil: 1',
    });
    expect(files.status).toBe(204);
    expect(files.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
    expect(files.headers.get('access-control-allow-headers')).toBeNull();
  });

  it('gives a refused origin’s preflight no CORS header and no 2xx, and never answers a path it does not route', async () => {
    const refused = await preflight('/v1/chat/completions', EVIL);
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST');
    expect(corsHeaders(refused.headers)).toEqual({});
    // `https://console.example:9080` is another origin than `http://console.example:9080`.
    const otherScheme = await preflight('/v1/chat/completions', CONSOLE.replace('http:', 'https:'));
    expect(otherScheme.status).toBe(405);
    expect(corsHeaders(otherScheme.headers)).toEqual({});

    const unrouted = await preflight('/v1/no-such-route', CONSOLE);
    expect(unrouted.status).toBeGreaterThanOrEqual(400);
    expect(unrouted.headers.get('access-control-allow-methods')).toBeNull();
    // The admin API (on the same port in embedded mode) is never opened to another origin's page.
    const adminApi = await fetch(`${gateway.url}/api/config`, {
      method: 'OPTIONS',
      headers: { origin: CONSOLE, 'access-control-request-method': 'PUT' },
    });
    expect(adminApi.status).toBeGreaterThanOrEqual(400);
    expect(corsHeaders(adminApi.headers)).toEqual({});
  });

  it('lets an allowed origin read a chat answer and gw’s headers; another origin’s answer carries none', async () => {
    const sent = openai.requests.length;
    const answer = await chat(CONSOLE, 'Hello from a page');
    expect(answer.status).toBe(200);
    expect(
      ((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
    ).toBe('Hello from the fake upstream');
    expect(openai.requests.length).toBe(sent + 1);
    expect(openai.requests.at(-1)!.body).toMatchObject({
      messages: [{ role: 'user', content: 'Hello from a page' }],
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(answer.headers.get('vary')).toBe('Origin');
    const exposed = answer.headers.get('access-control-expose-headers')!.split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'x-gw-cache', 'x-gw-cache-entry-id']));
    expect(answer.headers.get('x-request-id')).toMatch(/\S/);
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();

    // An error answer is readable too: the page can show why gw refused it.
    const unauthorized = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: CONSOLE, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(CONSOLE);

    const other = await chat(EVIL, 'Hello from elsewhere');
    expect(other.status).toBe(200);
    expect(corsHeaders(other.headers)).toEqual({});
  });

  it('keeps a relayed answer’s own CORS headers out: who may read it is gw’s setting', async () => {
    const refused = await models(EVIL);
    expect(refused.status).toBe(200);
    expect(((await refused.json()) as { data: { id: string }[] }).data[0]!.id).toBe('gpt-4o-mini');
    expect(openai.requests.at(-1)!.path).toBe('/v1/models');
    expect(corsHeaders(refused.headers)).toEqual({});

    const allowed = await models(CONSOLE);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    expect(allowed.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect(allowed.headers.get('vary')).toMatch(/\bOrigin\b/);
  });

  it('refuses a list that is not origins, and `*` while virtual keys are not enforced', async () => {
    const withPath = await setOrigins(['https://console.example/ui']);
    expect(withPath.status).toBe(400);
    expect(JSON.stringify(withPath.body)).toContain("'https://console.example/ui' is not an origin");

    const tooMany = await setOrigins(
      Array.from({ length: 101 }, (_, index) => `https://site${index}.example`),
    );
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain('cors_allowed_origins');

    const anyWithoutKeys = await call(
      'PUT',
      `${gateway.adminUrl}/api/config`,
      { client: { enforce_virtual_keys: false, cors_allowed_origins: ['*'] } },
      ADMIN,
    );
    expect(anyWithoutKeys.status).toBe(400);
    expect(JSON.stringify(anyWithoutKeys.body)).toContain('allowed only with client.enforce_virtual_keys');
  });

  it('applies a change live: `*` allows any origin, and an empty list adds nothing at all', async () => {
    expect((await setOrigins(['*'])).status).toBe(200);
    await expect
      .poll(async () => (await preflight('/v1/chat/completions', EVIL)).status, { timeout: 10_000 })
      .toBe(204);
    const anyPage = await preflight('/v1/chat/completions', EVIL);
    expect(anyPage.headers.get('access-control-allow-origin')).toBe(EVIL);

    expect((await setOrigins([])).status).toBe(200);
    await expect
      .poll(async () => (await preflight('/v1/chat/completions', CONSOLE)).status, { timeout: 10_000 })
      .toBe(405);
    const answer = await chat(CONSOLE, 'Hello without CORS');
    expect(answer.status).toBe(200);
    expect(corsHeaders(answer.headers)).toEqual({});
    expect(answer.headers.get('vary')).toBeNull();
  });
});
