import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { refuseMovedSecrets, refuseSecretReferences } from './secret-policy.ts';

function refusal(work: () => void): GatewayError {
  try {
    work();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('refuseSecretReferences', () => {
  it('refuses an env or secret-manager reference anywhere, naming the field and the rule', () => {
    for (const reference of [
      'env.GATEWAY_ADMIN_TOKEN',
      'vault.secret/gw#key',
      'aws-sm.prod/key',
      'gcp-sm.projects/p/secrets/s',
      'azure-kv.vault1/secret',
    ]) {
      const error = refusal(() =>
        refuseSecretReferences({ type: 'x', headers: { a: reference } }, { mayReference: false }),
      );
      expect(error.status).toBe(400);
      expect(error.code).toBe('secret_reference');
      expect(error.param).toBe('headers.a');
      expect(error.message).toContain('headers.a:');
      expect(error.message).toContain('secrets:reference');
    }
    const nested = refusal(() =>
      refuseSecretReferences({ keys: [{ value: 'ok' }, { value: 'env.X' }] }, { mayReference: false }),
    );
    expect(nested.param).toBe('keys[1].value');
  });

  it('accepts them for a caller with the permission, and plain values for everyone', () => {
    expect(() => refuseSecretReferences({ api_key: 'env.X' }, { mayReference: true })).not.toThrow();
    expect(() => refuseSecretReferences({ api_key: 'environment' }, { mayReference: false })).not.toThrow();
  });

  it('keeps a stored reference written back, unless the write moves where it is sent', () => {
    const stored = { endpoint: 'https://a.example', api_key: 'env.KEY' };
    expect(() =>
      refuseSecretReferences({ ...stored, enabled: false }, { mayReference: false, stored }),
    ).not.toThrow();
    const moved = refusal(() =>
      refuseSecretReferences(
        { ...stored, endpoint: 'https://evil.example' },
        { mayReference: false, stored, prefix: 'config.' },
      ),
    );
    expect(moved.param).toBe('config.endpoint');
    expect(moved.message).toContain('config.api_key');
    expect(() =>
      refuseSecretReferences({ ...stored, endpoint: 'https://evil.example' }, { mayReference: true, stored }),
    ).not.toThrow();
  });
});

describe('refuseMovedSecrets', () => {
  const stored = {
    network_config: { base_url: 'https://api.example.com' },
    keys: [{ id: 'main', value: 'sk-admin-key-0123456789' }],
  };
  it('refuses a stored credential kept while its destination changes, unless the caller may', () => {
    const moved = {
      network_config: { base_url: 'https://evil.example.com' },
      keys: [{ id: 'main', value: 'sk-admin-key-0123456789' }],
    };
    const error = refusal(() => refuseMovedSecrets(moved, { mayReference: false, stored }));
    expect(error.param).toBe('network_config.base_url');
    expect(error.message).toContain('keys[0].value');
    expect(() => refuseMovedSecrets(moved, { mayReference: true, stored })).not.toThrow();
  });
  it('accepts a new destination with new credentials, and kept credentials at the same destination', () => {
    const renewed = {
      network_config: { base_url: 'https://b.example.com' },
      keys: [{ value: 'sk-new-key-0000000000' }],
    };
    expect(() => refuseMovedSecrets(renewed, { mayReference: false, stored })).not.toThrow();
    const same = { ...stored, keys: [...stored.keys, { value: 'sk-other' }] };
    expect(() => refuseMovedSecrets(same, { mayReference: false, stored })).not.toThrow();
    expect(() => refuseMovedSecrets(renewed, { mayReference: false })).not.toThrow();
  });
});
