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
    ['/v1/models/x%2f..%2fy', 'dot segment'],
    ['/v1/models/x%2F%2E%2E%2Fy', 'dot segment'],
    ['/v1/models/..%5cy', 'dot segment'],
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

  it('takes encoded slashes as part of a name, except on strict (pass-through) paths', () => {
    for (const target of [
      '/genai/v1beta/models/openai%2Fgpt-4o:generateContent',
      '/bedrock/model/arn%3Aaws%2Fx/converse',
    ]) {
      expect(requestTargetProblem('POST', target)).toBeUndefined();
    }
    expect(requestTargetProblem('GET', '/files/x%2Fy', { strict: true })).toContain('encoded slash');
    expect(requestTargetProblem('GET', '/files/x%5Cy', { strict: true })).toContain('encoded backslash');
  });

  it('allows the asterisk form for OPTIONS only', () => {
    expect(requestTargetProblem('OPTIONS', '*')).toBeUndefined();
    expect(requestTargetProblem('GET', '*')).toContain('asterisk');
  });
});
