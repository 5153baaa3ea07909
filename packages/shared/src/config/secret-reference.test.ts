import { describe, expect, it } from 'vitest';
import { resolveSecret } from './env-reference.ts';
import { parseSecretReference } from './secret-reference.ts';

describe('parseSecretReference', () => {
  it.each([
    ['vault.secret/gw/openai#api_key', { backend: 'vault', secret: 'secret/gw/openai', field: 'api_key' }],
    ['aws-sm.gw/openai', { backend: 'aws-sm', secret: 'gw/openai', field: undefined }],
    [
      'aws-sm.arn:aws:secretsmanager:eu-west-1:123456789012:secret:gw-AbCdEf#key',
      {
        backend: 'aws-sm',
        secret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:gw-AbCdEf',
        field: 'key',
      },
    ],
    [
      'gcp-sm.projects/p1/secrets/openai',
      { backend: 'gcp-sm', secret: 'projects/p1/secrets/openai', field: undefined },
    ],
    [
      'gcp-sm.projects/p1/secrets/openai/versions/3#k',
      { backend: 'gcp-sm', secret: 'projects/p1/secrets/openai/versions/3', field: 'k' },
    ],
    [
      'azure-kv.gw-vault/openai-key',
      { backend: 'azure-kv', secret: 'gw-vault/openai-key', field: undefined },
    ],
  ])('reads %s', (text, expected) => {
    expect(parseSecretReference(text)).toEqual({ text, ...expected });
  });

  it.each([
    ['vault.secret/gw/openai', /names no field/],
    ['vault.nopath#f', /vault\.<mount>\/<path>#<field>/],
    ['gcp-sm.openai', /gcp-sm\.projects\/<project>\/secrets\/<name>/],
    ['azure-kv.vault-only', /azure-kv\.<vault-name>\/<secret-name>/],
    ['aws-sm.has space', /aws-sm\.<secret-id>/],
    ['aws-sm.gw#', /not a valid secret reference/],
  ])('refuses %s, naming the form', (text, message) => {
    const result = parseSecretReference(text);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toMatch(message);
  });

  it('leaves plain values and env references alone', () => {
    expect(parseSecretReference('sk-plain')).toBeUndefined();
    expect(parseSecretReference('env.OPENAI_API_KEY')).toBeUndefined();
  });
});

describe('resolveSecret', () => {
  const secrets = { lookup: (reference: string) => (reference === 'vault.a/b#c' ? 'from-vault' : undefined) };
  it('keeps env.NAME and plain values as they were, and reads references from the lookup', () => {
    expect(resolveSecret('env.KEY', { KEY: 'from-env' }, secrets)).toBe('from-env');
    expect(resolveSecret('plain', {}, secrets)).toBe('plain');
    expect(resolveSecret('vault.a/b#c', {}, secrets)).toBe('from-vault');
    expect(resolveSecret('vault.a/b#other', {}, secrets)).toBeUndefined();
    expect(resolveSecret('vault.a/b#c', {})).toBeUndefined();
  });
});
