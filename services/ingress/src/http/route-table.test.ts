import { describe, expect, it } from 'vitest';
import type { RouteGroup, RouteHandler } from './route.ts';
import { compileRoutes, wildcardOf } from './route-table.ts';

const named = (name: string): RouteHandler => Object.assign(async () => {}, { label: name });
const label = (handler: RouteHandler | undefined) => (handler as { label?: string } | undefined)?.label;

const GROUPS: RouteGroup[] = [
  {
    routes: [
      { method: 'POST', path: '/v1/chat/completions', handler: named('chat') },
      { method: ['GET', 'POST', 'DELETE'], path: '/v1/files', handler: named('files') },
      { method: ['GET', 'POST', 'DELETE'], path: '/v1/files/*', handler: named('file') },
    ],
  },
  {
    prefix: '/genai',
    routes: [
      { method: 'GET', path: '/genai/v1beta/models', handler: named('models') },
      { method: 'GET', path: '/genai/v1beta/models/*', handler: named('model') },
      { method: 'POST', path: '/genai/v1beta/models/*:generateContent', handler: named('generate') },
      { method: 'POST', path: '/genai/v1beta/*:generateContent', handler: named('bare') },
    ],
  },
];

describe('compileRoutes', () => {
  const match = compileRoutes(GROUPS);

  it('finds exact paths, then the pattern with the longest literal head, then the longest tail', () => {
    expect(match('/v1/chat/completions')?.pattern).toBe('/v1/chat/completions');
    expect(match('/v1/files')?.pattern).toBe('/v1/files');
    expect(match('/v1/files/file-1/content')?.pattern).toBe('/v1/files/*');
    expect(match('/genai/v1beta/models/gemini-2.5-pro')?.pattern).toBe('/genai/v1beta/models/*');
    expect(match('/genai/v1beta/models/gemini-2.5-pro:generateContent')?.pattern).toBe(
      '/genai/v1beta/models/*:generateContent',
    );
    expect(match('/genai/v1beta/openai/gpt-4o:generateContent')?.pattern).toBe(
      '/genai/v1beta/*:generateContent',
    );
  });

  it('hands the handler what the * matched, and a * matches at least one character', () => {
    const path = '/genai/v1beta/models/a/b:c:generateContent';
    const found = match(path)!;
    expect(wildcardOf(found, path)).toBe('a/b:c');
    expect(wildcardOf(match('/v1/files')!, '/v1/files')).toBe('');
    expect(label(found.routes.get('POST')?.handler)).toBe('generate');
    // `/v1/files/` is no file: no row, and `/v1` belongs to no group, so it is not ingress's.
    expect(match('/v1/files/')).toBeUndefined();
  });

  it('gives each pattern its methods, so 405 and Allow come from the rows', () => {
    const models = match('/genai/v1beta/models/gemini-2.5-pro')!;
    expect(models.routes.has('POST')).toBe(false);
    expect(models.allow).toBe('GET');
    const generate = match('/genai/v1beta/models/gemini-2.5-pro:generateContent')!;
    expect(generate.routes.has('GET')).toBe(false);
    expect(generate.allowed).toEqual(['POST']);
    expect(match('/v1/files/file-1')!.allow).toBe('GET, POST, DELETE');
  });

  it("answers a path below a group's prefix that no row declares as that group's, with no methods", () => {
    const unknown = match('/genai/v1beta/tunedModels')!;
    expect(unknown.pattern).toBe('/genai/*');
    expect(unknown.group).toBe(GROUPS[1]);
    expect(unknown.routes.size).toBe(0);
    expect(unknown.allow).toBe('');
    expect(match('/genai')?.pattern).toBe('/genai/*');
    expect(match('/genaix/v1beta/models')).toBeUndefined();
    expect(match('/v2/chat/completions')).toBeUndefined();
  });

  it('refuses a table that contradicts itself', () => {
    const handler = named('x');
    expect(() =>
      compileRoutes([
        {
          routes: [
            { method: 'GET', path: '/a', handler },
            { method: ['POST', 'GET'], path: '/a', handler },
          ],
        },
      ]),
    ).toThrow('GET /a is declared twice');
    expect(() =>
      compileRoutes([
        { routes: [{ method: 'GET', path: '/a', handler }] },
        { routes: [{ method: 'POST', path: '/a', handler }] },
      ]),
    ).toThrow("'/a' is declared by two groups");
    expect(() => compileRoutes([{ routes: [{ method: 'GET', path: '/*/a', handler }] }])).toThrow(
      'first segment',
    );
    expect(() => compileRoutes([{ routes: [{ method: 'GET', path: '/a/*/b/*', handler }] }])).toThrow(
      "two '*'",
    );
    expect(() => compileRoutes([{ prefix: '/a/b', routes: [] }])).toThrow('one segment');
    expect(() => compileRoutes([{ prefix: '/a', routes: [{ method: 'GET', path: '/b', handler }] }])).toThrow(
      "outside its group's prefix '/a'",
    );
  });
});
