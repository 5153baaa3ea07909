import { describe, expect, it } from 'vitest';
import { requestTargetProblem } from './request-target.ts';

describe('requestTargetProblem', () => {
  it.each([
    '/',
    '/v1/chat/completions',
    '/v1/models/gpt-4o',
    '/v1/models/',
    '/v1/files/file-abc/content?purpose=batch&x=%2F',
    '/genai/v1beta/models/gemini-2.5-flash:generateContent?key=abc',
    '/v1/models/ft:gpt-4o:acme::abc123',
    '/v1/files/...hidden',
    '/v1/files/a.b',
    '/v1/models/%41bc',
    '/v1/models/caf%C3%A9',
  ])('serves %s', (target) => {
    expect(requestTargetProblem('GET', target)).toBeUndefined();
  });

  it.each([
    ['/v1/models/../../api/providers', 'dot segment'],
    ['/v1/models/..', 'dot segment'],
    ['/v1/./models', 'dot segment'],
    ['/v1/models/%2e%2e/%2e%2e/api/providers', 'dot segment'],
    ['/v1/models/%2E%2e/x', 'dot segment'],
    ['/v1/models/.%2e/x', 'dot segment'],
    ['/v1/models/%2e/x', 'dot segment'],
    ['/v1/models/..?x=1', 'dot segment'],
    ['/v1/models/x%2f..%2fy', 'encoded slash'],
    ['/v1/models/x%2Fy', 'encoded slash'],
    ['/v1/models/x%5cy', 'encoded backslash'],
    ['/v1/models\\..\\x', 'backslash'],
    ['//v1/models', 'empty segment'],
    ['/v1//models', 'empty segment'],
    ['/v1/models/x%00', 'control character'],
    ['/v1/models/x%0a', 'control character'],
    ['/v1/models?x=\u0001', 'control character'],
    ['http://evil.example/v1/models', 'origin form'],
    ['v1/models', 'origin form'],
    ['', 'empty'],
  ])('refuses %s (%s)', (target, words) => {
    expect(requestTargetProblem('GET', target)).toContain(words);
  });

  it('allows the asterisk form for OPTIONS only', () => {
    expect(requestTargetProblem('OPTIONS', '*')).toBeUndefined();
    expect(requestTargetProblem('GET', '*')).toContain('asterisk');
  });
});
