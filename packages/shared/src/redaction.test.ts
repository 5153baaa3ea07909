// The one redaction list: masking of stored credentials for display, and the removal of credentials from
// text an upstream sent back.
import { describe, expect, it } from 'vitest';
import { maskSecret, redactJson, redactText, redactUrl, urlSecrets } from './redaction.ts';

describe('redactText', () => {
  it('removes known secrets and every shape of key, leaving the rest', () => {
    const text =
      'key my-own-secret-value rejected; also sk-ant-api03-abcdefghijklmnop1234, AKIAIOSFODNN7EXAMPLE, ' +
      'AIzaSyA-1234567890abcdefghijklmnopqrstu, Bearer eyJhbGciOiJIUzI1NiJ9.payload, ' +
      'https://user:hunter2@mcp.example.com/path';
    expect(redactText(text, ['my-own-secret-value'])).toBe(
      'key [redacted] rejected; also [redacted], [redacted], [redacted], [redacted], ' +
        'https://user:[redacted]@mcp.example.com/path',
    );
  });

  it('removes a known secret echoed in base64 (any alignment, either alphabet) or spaced out', () => {
    // A key of no known shape, so only the known-secret list can find it.
    const secret = 'my-upstream-key+/=0123456789?>?';
    for (const prefix of ['', 'x', 'xy', 'user:']) {
      const encoded = Buffer.from(`${prefix}${secret} trailing`).toString('base64');
      for (const form of [encoded, encoded.replaceAll('+', '-').replaceAll('/', '_')]) {
        const redacted = redactText(`echo: ${form}`, [secret]);
        expect(redacted, `${prefix}|${form}`).toContain('[redacted]');
        // What is left around the mark no longer decodes to the key.
        expect(Buffer.from(redacted.replace('[redacted]', ''), 'base64').toString()).not.toContain(secret);
      }
    }
    expect(redactText(`Basic ${Buffer.from(`u:${secret}`).toString('base64')}`, [secret])).not.toMatch(
      /[A-Za-z0-9+/]{12}/,
    );
    const spaced = [...secret].join(' ');
    expect(redactText(`got "${spaced}" and "my-upstream-\nkey+/=0123  456789?>?"`, [secret])).toBe(
      'got "[redacted]" and "[redacted]"',
    );
    // Other text that merely shares characters is left alone.
    expect(redactText('my upstream key', [secret])).toBe('my upstream key');
  });

  it('ignores secrets too short to be told apart from ordinary words', () => {
    expect(redactText('the model is gpt', ['gpt'])).toBe('the model is gpt');
  });

  it('walks JSON values, object keys included', () => {
    expect(
      redactJson({
        error: { [`for sk-live-abcdefghijklmnopqrstuv`]: ['sk-live-abcdefghijklmnopqrstuv', 3] },
      }),
    ).toEqual({
      error: { 'for [redacted]': ['[redacted]', 3] },
    });
  });
});

describe('masking for display', () => {
  it('shows a credential by its ends, an env reference as is', () => {
    expect(maskSecret('sk-abcdefghijklmnop1234')).toBe('sk-****1234');
    expect(maskSecret('short')).toBe('****');
    expect(maskSecret('env.OPENAI_API_KEY')).toBe('env.OPENAI_API_KEY');
  });
});

describe('URLs that carry credentials', () => {
  const url = 'https://user:hunter2pass@mcp.example.com/mcp?api_key=abc123secret&team=x';

  it('masks passwords and credential query parameters for display, keeps the rest', () => {
    expect(redactUrl(url)).toBe('https://user:****@mcp.example.com/mcp?api_key=****&team=x');
    expect(redactUrl('http://127.0.0.1:3001/sse')).toBe('http://127.0.0.1:3001/sse');
    expect(redactUrl('not a url')).toBe('****');
  });

  it('names the credentials of a URL, and takes them out of any text that echoes them', () => {
    const basic = Buffer.from('user:hunter2pass').toString('base64');
    expect(urlSecrets(url)).toEqual(['hunter2pass', 'hunter2pass', basic, 'abc123secret']);
    expect(urlSecrets(undefined)).toEqual([]);
    const echoed = `401 for /mcp?api_key=abc123secret failed, wrong password hunter2pass`;
    expect(redactText(echoed, urlSecrets(url))).toBe(
      '401 for /mcp?api_key=[redacted] failed, wrong password [redacted]',
    );
    // Without the list, the shapes still catch a credential query value and a URL's password.
    expect(redactText(`GET ${url}`)).toBe(
      'GET https://user:[redacted]@mcp.example.com/mcp?api_key=[redacted]&team=x',
    );
  });
});
