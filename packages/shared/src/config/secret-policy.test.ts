import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.ts';
import { providerConfigSchema } from '../schemas/providers.ts';
import { destination, secret, secretsByName } from './declared-fields.ts';
import { refuseMovedSecrets, refuseSecretReferences } from './secret-policy.ts';
import { secretReferenceRule } from './secret-reference-rule.ts';

/** The rule of a config file without `admin.secret_references`. */
const references = secretReferenceRule({});

function refusal(work: () => void): GatewayError {
  try {
    work();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** A resource as a new type would declare it: what its fields are is in its schema, not in their names. */
const resourceSchema = z.object({
  type: z.string().optional(),
  endpoint: destination(z.url()).optional(),
  /** A credential whose name says nothing. */
  pass_phrase: secret(z.string()).optional(),
  headers: secretsByName(z.record(z.string(), z.string())).optional(),
  label: z.string().optional(),
  enabled: z.boolean().optional(),
});

describe('refuseSecretReferences', () => {
  it('refuses an env or secret-manager reference in a credential field, naming the field and the rule', () => {
    for (const reference of [
      'env.GATEWAY_ADMIN_TOKEN',
      'vault.secret/gw#key',
      'aws-sm.prod/key',
      'gcp-sm.projects/p/secrets/s',
      'azure-kv.vault1/secret',
    ]) {
      const error = refusal(() =>
        refuseSecretReferences(
          resourceSchema,
          { headers: { authorization: reference } },
          { references, mayReference: false },
        ),
      );
      expect(error.status).toBe(400);
      expect(error.code).toBe('secret_reference');
      expect(error.param).toBe('headers.authorization');
      expect(error.message).toContain('headers.authorization:');
      expect(error.message).toContain('secrets:reference');
    }
    const nested = refusal(() =>
      refuseSecretReferences(
        providerConfigSchema,
        { keys: [{ value: 'ok' }, { value: 'env.X' }] },
        { references, mayReference: false },
      ),
    );
    expect(nested.param).toBe('keys[1].value');
  });

  it('refuses a reference outside credential fields for everyone: it would be sent as written', () => {
    for (const field of ['label', 'endpoint']) {
      const error = refusal(() =>
        refuseSecretReferences(
          resourceSchema,
          { [field]: 'env.GATEWAY_ADMIN_TOKEN' },
          { references, mayReference: true },
        ),
      );
      expect(error.param).toBe(field);
      expect(error.message).toContain('is not a credential field');
    }
    // A header not named like a credential is not one either.
    const header = refusal(() =>
      refuseSecretReferences(
        resourceSchema,
        { headers: { 'x-trace': 'env.X' } },
        { references, mayReference: true },
      ),
    );
    expect(header.param).toBe('headers.x-trace');
  });

  it('accepts them in credential fields for a caller with the permission, and plain values for everyone', () => {
    expect(() =>
      refuseSecretReferences(resourceSchema, { pass_phrase: 'env.X' }, { references, mayReference: true }),
    ).not.toThrow();
    expect(() =>
      refuseSecretReferences(
        resourceSchema,
        { pass_phrase: 'environment' },
        { references, mayReference: false },
      ),
    ).not.toThrow();
  });

  it('keeps a stored reference written back, unless the write moves where it is sent', () => {
    const stored = { endpoint: 'https://a.example', pass_phrase: 'env.KEY' };
    expect(() =>
      refuseSecretReferences(
        resourceSchema,
        { ...stored, enabled: false },
        { references, mayReference: false, stored },
      ),
    ).not.toThrow();
    const moved = refusal(() =>
      refuseSecretReferences(
        resourceSchema,
        { ...stored, endpoint: 'https://evil.example' },
        { references, mayReference: false, stored, prefix: 'config.' },
      ),
    );
    expect(moved.param).toBe('config.endpoint');
    expect(moved.message).toContain('config.pass_phrase');
    expect(() =>
      refuseSecretReferences(
        resourceSchema,
        { ...stored, endpoint: 'https://evil.example' },
        { references, mayReference: true, stored },
      ),
    ).not.toThrow();
  });
});

describe('refuseSecretReferences for a caller with secrets:reference (issue 42, defect 4)', () => {
  const admin = { mayReference: true, references };

  it("refuses gw's own credentials, naming the field and the reference, never the value", () => {
    for (const reference of ['env.GATEWAY_ADMIN_TOKEN', 'env.GW_CLUSTER_TOKEN', 'env.GW_LOGS_DATABASE_URL']) {
      const error = refusal(() => refuseSecretReferences(resourceSchema, { pass_phrase: reference }, admin));
      expect(error).toMatchObject({ status: 400, code: 'secret_reference', param: 'pass_phrase' });
      expect(error.message).toContain(`pass_phrase: '${reference}'`);
      expect(error.message).toContain('is a variable gw itself reads');
    }
    const listed = secretReferenceRule({ allow: ['env.OPENAI_*'] });
    const other = refusal(() =>
      refuseSecretReferences(
        providerConfigSchema,
        { keys: [{ value: 'env.OPENAI_API_KEY' }, { value: 'env.HOME' }] },
        { mayReference: true, references: listed },
      ),
    );
    expect(other.param).toBe('keys[1].value');
    expect(other.message).toContain("keys[1].value: 'env.HOME'");
    expect(other.message).toContain('admin.secret_references.allow');
  });

  it('keeps a refused reference the resource already holds where it was sent, not elsewhere', () => {
    const stored = { endpoint: 'https://a.example', pass_phrase: 'env.VAULT_TOKEN' };
    expect(() =>
      refuseSecretReferences(resourceSchema, { ...stored, enabled: false }, { ...admin, stored }),
    ).not.toThrow();
    const moved = refusal(() =>
      refuseSecretReferences(
        resourceSchema,
        { ...stored, endpoint: 'https://evil.example' },
        { ...admin, stored },
      ),
    );
    expect(moved.param).toBe('endpoint');
    expect(moved.message).toContain("stored reference 'env.VAULT_TOKEN' of pass_phrase");
    expect(moved.message).toContain('admin.secret_references.allow');
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
    const error = refusal(() =>
      refuseMovedSecrets(providerConfigSchema, moved, { mayReference: false, stored }),
    );
    expect(error.param).toBe('network_config.base_url');
    expect(error.message).toContain('keys[0].value');
    expect(() =>
      refuseMovedSecrets(providerConfigSchema, moved, { mayReference: true, stored }),
    ).not.toThrow();
  });
  it('follows the declared destinations of a new resource type, whatever their names', () => {
    const kept = { endpoint: 'https://a.example', pass_phrase: 'correct horse battery' };
    const error = refusal(() =>
      refuseMovedSecrets(
        resourceSchema,
        { ...kept, endpoint: 'https://b.example' },
        { mayReference: false, stored: kept },
      ),
    );
    expect(error.param).toBe('endpoint');
    expect(error.message).toContain('pass_phrase');
  });
  it('accepts a new destination with new credentials, and kept credentials at the same destination', () => {
    const renewed = {
      network_config: { base_url: 'https://b.example.com' },
      keys: [{ value: 'sk-new-key-0000000000' }],
    };
    expect(() =>
      refuseMovedSecrets(providerConfigSchema, renewed, { mayReference: false, stored }),
    ).not.toThrow();
    const same = { ...stored, keys: [...stored.keys, { value: 'sk-other' }] };
    expect(() =>
      refuseMovedSecrets(providerConfigSchema, same, { mayReference: false, stored }),
    ).not.toThrow();
    expect(() => refuseMovedSecrets(providerConfigSchema, renewed, { mayReference: false })).not.toThrow();
  });
});
