import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outboundPolicy } from '../http/outbound-address.ts';
import { guardrailProfileSchema } from '../schemas/guardrails.ts';
import { providerConfigSchema } from '../schemas/providers.ts';
import {
  destination,
  fieldTree,
  liveSection,
  restartOnly,
  restartOnlyPaths,
  restartSection,
  secret,
  secretsByName,
  sectionsOf,
  walkFields,
} from './declared-fields.ts';
import { checkDestinations, keepStoredSecrets, maskSecrets, secretValues } from './declared-values.ts';
import { gatewayConfigSchema } from './gateway-config.ts';

function marks(schema: z.ZodType, value: unknown) {
  const found: Record<string, string> = {};
  walkFields(fieldTree(schema), value, (field) => {
    found[field.path] = `${field.secret ? 'secret' : ''}${field.destination ? 'destination' : ''}` || '-';
  });
  return found;
}

describe('declared fields', () => {
  it('finds marks through wrappers, refinements, arrays, maps and the options of a union', () => {
    const schema = z.object({
      list: z.array(z.object({ token: secret(z.string().min(1)).optional() })).default([]),
      map: z.record(z.string(), z.object({ url: destination(z.url()) })),
      either: z.discriminatedUnion('type', [
        z.object({ type: z.literal('a'), key: secret(z.string()) }),
        z.object({ type: z.literal('b'), host: destination(z.string()) }),
      ]),
      plain: z.string().refine(() => true),
    });
    expect(
      marks(schema, {
        list: [{ token: 't' }],
        map: { one: { url: 'https://x.example' } },
        either: { type: 'b', host: 'h', key: 'k' },
        plain: 'p',
      }),
    ).toEqual({
      'list[0].token': 'secret',
      'map.one.url': 'destination',
      'either.type': '-',
      'either.host': 'destination',
      'either.key': 'secret',
      plain: '-',
    });
  });

  it('treats members of a secret-by-name map as credentials when their names (or an enclosing one) say so', () => {
    const schema = z.object({ headers: secretsByName(z.record(z.string(), z.unknown())) });
    expect(
      marks(schema, { headers: { authorization: 'a', 'x-trace': 't', credentials: { inner: 'i' } } }),
    ).toEqual({
      'headers.authorization': 'secret',
      'headers.x-trace': '-',
      'headers.credentials.inner': 'secret',
    });
  });

  it('declares the provider config: key values, key credentials, base URL and key endpoints', () => {
    expect(
      marks(providerConfigSchema, {
        keys: [{ value: 'v', config: { endpoint: 'https://e', secret_key: 's', deployments: { m: 'd' } } }],
        network_config: { base_url: 'https://b', extra_headers: { 'x-api-key': 'h', accept: 'json' } },
      }),
    ).toEqual({
      'keys[0].value': 'secret',
      'keys[0].config.endpoint': 'destination',
      'keys[0].config.secret_key': 'secret',
      'keys[0].config.deployments.m': '-',
      'network_config.base_url': 'destination',
      'network_config.extra_headers.x-api-key': 'secret',
      'network_config.extra_headers.accept': '-',
    });
  });

  it('says which config sections apply live, and which settings of a live section need a restart', () => {
    const sections = sectionsOf(fieldTree(gatewayConfigSchema));
    expect(sections.get('client')).toBe('live');
    expect(sections.get('logs')).toBe('live');
    expect(sections.get('network')).toBe('restart');
    expect(sections.get('tracing')).toBe('restart');
    const schema = z.object({
      live: liveSection(z.object({ now: z.number(), later: restartOnly(z.number()).default(1) })),
      start: restartSection(z.object({ any: z.number() })),
    });
    expect(restartOnlyPaths(fieldTree(schema))).toEqual(['live.later']);
    // Every top-level section says how it applies: a new one must be declared.
    expect([...sections.keys()].sort()).toEqual(Object.keys(gatewayConfigSchema.shape).sort());
  });
});

describe('declared values', () => {
  const stored = {
    keys: [
      { id: 'a', value: 'sk-aaaaaaaaaaaaaaaaaaaa', config: { secret_key: 'aws-secret-0123456789' } },
      { id: 'b', value: 'env.B_KEY' },
    ],
    network_config: {
      base_url: 'https://user:p4ssw0rd@api.example/v1',
      extra_headers: { authorization: 'Bearer xyz-123456789' },
    },
  };

  it('masks credentials and the credentials of destination URLs; references are shown as written', () => {
    const shown = maskSecrets(fieldTree(providerConfigSchema), stored);
    expect(shown.keys[0]?.value).toBe('sk-****aaaa');
    expect(shown.keys[0]?.config?.['secret_key']).toBe('aws****6789');
    expect(shown.keys[1]?.value).toBe('env.B_KEY');
    expect(shown.network_config.base_url).toBe('https://user:****@api.example/v1');
    expect(shown.network_config.extra_headers['authorization']).toBe('Bea****6789');
    expect(JSON.stringify(shown)).not.toContain('p4ssw0rd');
  });

  it('keeps the stored credentials a written value sends back masked, pairing list items by id', () => {
    const tree = fieldTree(providerConfigSchema);
    const shown = maskSecrets(tree, stored);
    // Reordered, one credential changed, one new key without an id.
    const written = {
      ...shown,
      keys: [
        { ...shown.keys[1]! },
        { ...shown.keys[0]!, config: { secret_key: 'aws-new-secret-99999' } },
        { value: 'sk-****aaaa' },
      ],
    };
    const kept = keepStoredSecrets(tree, written as typeof stored, stored);
    expect(kept.keys[0]?.value).toBe('env.B_KEY');
    expect(kept.keys[1]?.value).toBe('sk-aaaaaaaaaaaaaaaaaaaa');
    expect(kept.keys[1]?.config?.['secret_key']).toBe('aws-new-secret-99999');
    // A mask without a stored key behind it stays what it is (the adapter refuses it, or it is a new value).
    expect(kept.keys[2]?.value).toBe('sk-****aaaa');
    expect(kept.network_config.base_url).toBe('https://user:p4ssw0rd@api.example/v1');
    expect(kept.network_config.extra_headers['authorization']).toBe('Bearer xyz-123456789');
  });

  describe('a destination URL sent back with its credentials masked (issue 42, defect 3)', () => {
    const tree = fieldTree(guardrailProfileSchema);
    const hook = (url: string) => ({ id: 'w', type: 'webhook', url });
    const storedHook = hook('https://user:p4ssw0rd@hooks.example/v1?token=t0ken-value&team=a');
    const keptUrl = (url: string) => keepStoredSecrets(tree, hook(url), storedHook).url;

    it('keeps the stored password and credential parameters when only other parts changed', () => {
      expect(keptUrl('https://user:****@hooks.example/v2?token=****&team=b')).toBe(
        'https://user:p4ssw0rd@hooks.example/v2?token=t0ken-value&team=b',
      );
      expect(keptUrl('https://user:****@hooks.example/v1?team=a')).toBe(
        'https://user:p4ssw0rd@hooks.example/v1?team=a',
      );
    });

    it("keeps them when sent back as a reader without secrets:read sees them ('[redacted]')", () => {
      expect(keptUrl('https://user:[redacted]@hooks.example/v1?token=[redacted]&team=a')).toBe(
        'https://user:p4ssw0rd@hooks.example/v1?token=t0ken-value&team=a',
      );
      expect(keptUrl('https://user:%5Bredacted%5D@hooks.example/v1?token=%5Bredacted%5D&team=a')).toBe(
        'https://user:p4ssw0rd@hooks.example/v1?token=t0ken-value&team=a',
      );
    });

    it('takes a new password or parameter as written', () => {
      expect(keptUrl('https://user:n3w-pass@hooks.example/v1?token=****&team=a')).toBe(
        'https://user:n3w-pass@hooks.example/v1?token=t0ken-value&team=a',
      );
      expect(keptUrl('https://user:****@hooks.example/v1?token=new-token')).toBe(
        'https://user:p4ssw0rd@hooks.example/v1?token=new-token',
      );
      expect(keptUrl('https://hooks.example/v1')).toBe('https://hooks.example/v1');
      expect(keepStoredSecrets(tree, hook('https://user:****@new.example/'), undefined).url).toBe(
        'https://user:****@new.example/',
      );
    });

    it('refuses a mask that would follow the URL to another origin, naming the field', () => {
      for (const moved of [
        'https://user:****@elsewhere.example/v1?token=t',
        'http://user:****@hooks.example/v1',
        'https://hooks.example:8443/v1?token=****',
      ]) {
        expect(() => keptUrl(moved), moved).toThrow(
          expect.objectContaining({ status: 400, param: 'url', message: expect.stringMatching(/^url: /) }),
        );
      }
    });
  });

  it('lists the credentials to take out of echoed texts', () => {
    expect(secretValues(fieldTree(providerConfigSchema), stored).sort()).toEqual(
      ['Bearer xyz-123456789', 'aws-secret-0123456789', 'env.B_KEY', 'sk-aaaaaaaaaaaaaaaaaaaa'].sort(),
    );
  });

  it('checks every declared destination URL against the outbound policy, naming the field', async () => {
    await expect(
      checkDestinations(
        guardrailProfileSchema,
        { id: 'w', type: 'webhook', url: 'http://169.254.169.254/latest' },
        outboundPolicy(),
      ),
    ).rejects.toMatchObject({ param: 'url' });
    await expect(
      checkDestinations(
        providerConfigSchema,
        { keys: [{ value: 'k', config: { endpoint: 'http://10.0.0.8/' } }], network_config: {} },
        outboundPolicy(),
        { prefix: 'config.' },
      ),
    ).rejects.toMatchObject({ param: 'config.keys[0].config.endpoint' });
    await expect(
      checkDestinations(
        providerConfigSchema,
        { keys: [], network_config: { base_url: 'https://api.example' } },
        outboundPolicy(),
      ),
    ).resolves.toBeUndefined();
  });
});
