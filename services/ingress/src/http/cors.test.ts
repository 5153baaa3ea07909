import { type IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createCors } from './cors.ts';
import { compileRoutes } from './route-table.ts';

const match = compileRoutes([
  {
    routes: [
      { method: 'POST', path: '/v1/chat/completions', handler: async () => {} },
      { method: ['GET', 'POST', 'DELETE'], path: '/v1/files/*', handler: async () => {} },
    ],
  },
  { prefix: '/genai', routes: [{ method: 'GET', path: '/genai/v1beta/models', handler: async () => {} }] },
]);

const PAGE = 'https://app.example';

/** Runs the CORS step on a request to `path`: whether it answered, the status and the headers set. */
function run(
  cors: ReturnType<typeof createCors>,
  options: { method: string; path: string; headers: IncomingHttpHeaders },
) {
  const request = new IncomingMessage(new Socket());
  request.method = options.method;
  request.headers = options.headers;
  const response = new ServerResponse(request);
  const answered = cors(request, response, match(options.path)!);
  return { answered, status: answered ? response.statusCode : undefined, headers: response.getHeaders() };
}

const preflight = (headers: IncomingHttpHeaders = {}) => ({
  method: 'OPTIONS',
  path: '/v1/chat/completions',
  headers: { origin: PAGE, 'access-control-request-method': 'POST', ...headers },
});

describe('createCors', () => {
  it('adds nothing while the list is empty, not even Vary', () => {
    const cors = createCors(() => []);
    expect(run(cors, preflight())).toEqual({ answered: false, status: undefined, headers: {} });
    expect(
      run(cors, { method: 'POST', path: '/v1/chat/completions', headers: { origin: PAGE } }).headers,
    ).toEqual({});
  });

  it('follows the list as it changes, and tells caches the answer varies by origin', () => {
    let origins: string[] = ['https://other.example'];
    const cors = createCors(() => origins);
    expect(run(cors, preflight())).toEqual({
      answered: false,
      status: undefined,
      headers: { vary: 'Origin' },
    });
    origins = [PAGE];
    expect(run(cors, preflight())).toMatchObject({ answered: true, status: 204 });
    origins = ['*'];
    expect(run(cors, preflight()).headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('echoes requested header names only while they are a short list of names', () => {
    const cors = createCors(() => [PAGE]);
    const echoed = (requested: string) =>
      run(cors, preflight({ 'access-control-request-headers': requested })).headers[
        'access-control-allow-headers'
      ];
    expect(echoed('authorization,content-type,x-gw-cache-ttl')).toBe(
      'authorization,content-type,x-gw-cache-ttl',
    );
    expect(echoed('authorization\r\nx-injected: 1')).toBeUndefined();
    expect(echoed(Array.from({ length: 51 }, (_, index) => `x-h${index}`).join(','))).toBeUndefined();
  });

  it('answers a preflight only on a path a route declares; other requests get the read headers', () => {
    const cors = createCors(() => [PAGE]);
    const files = run(cors, { ...preflight(), path: '/v1/files/file-1' });
    expect(files.headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
    // Below a surface's prefix but declared by no row: its 404, readable by the page.
    const unrouted = run(cors, { ...preflight(), path: '/genai/unknown' });
    expect(unrouted.answered).toBe(false);
    expect(unrouted.headers['access-control-allow-methods']).toBeUndefined();
    expect(unrouted.headers['access-control-allow-origin']).toBe(PAGE);
    const chat = run(cors, { method: 'POST', path: '/v1/chat/completions', headers: { origin: PAGE } });
    expect(chat.answered).toBe(false);
    expect(String(chat.headers['access-control-expose-headers'])).toContain('x-gw-cache-entry-id');
  });
});
