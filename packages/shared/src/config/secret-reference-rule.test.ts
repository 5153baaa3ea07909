import { describe, expect, it } from 'vitest';
import { GATEWAY_VARIABLES } from './environment.ts';
import { parseGatewayConfig } from './gateway-config.ts';
import { secretReferenceRule } from './secret-reference-rule.ts';

/** The references of `candidates` a rule refuses. */
const refused = (rule: ReturnType<typeof secretReferenceRule>, candidates: string[]) =>
  candidates.filter((reference) => rule.refusal(reference) !== undefined);

describe('secretReferenceRule (admin.secret_references)', () => {
  it('never lets the API name a variable gw itself reads, whatever the allow list says', () => {
    for (const name of [
      'GATEWAY_ADMIN_TOKEN',
      'GW_CLUSTER_TOKEN',
      'GW_LOGS_DATABASE_URL',
      'REDIS_URL',
      'GW_OIDC_CLIENT_SECRET',
      'GW_SCIM_TOKEN',
      'GW_METRICS_TOKEN',
      'GW_GRPC_TLS_KEY',
      'GATEWAY_CONFIG',
    ])
      expect(GATEWAY_VARIABLES.has(name), name).toBe(true);
    for (const allow of [undefined, ['env.*'], ['env.GATEWAY_ADMIN_TOKEN', 'env.GW_*', 'env.REDIS_URL']]) {
      const rule = secretReferenceRule({ allow });
      for (const name of GATEWAY_VARIABLES) {
        const why = rule.refusal(`env.${name}`);
        expect(why, `${name} with ${JSON.stringify(allow)}`).toContain(
          `${name} is a variable gw itself reads`,
        );
      }
    }
  });

  it("by default takes every other reference but gw's namespace and its platform identity", () => {
    const rule = secretReferenceRule({});
    expect(
      refused(rule, [
        'env.OPENAI_API_KEY',
        'env.AZURE_CONTENT_SAFETY_KEY',
        'env.HOME',
        'vault.secret/gw/openai#api_key',
        'aws-sm.prod/key',
        'gcp-sm.projects/p/secrets/s',
        'azure-kv.vault1/secret',
      ]),
    ).toEqual([]);
    const own = [
      'env.GW_NOT_YET_READ',
      'env.GATEWAY_ANYTHING',
      'env.VAULT_TOKEN',
      'env.AWS_SECRET_ACCESS_KEY',
      'env.AWS_SESSION_TOKEN',
      'env.AZURE_CLIENT_SECRET',
      'env.GOOGLE_APPLICATION_CREDENTIALS',
      'env.PGPASSWORD',
    ];
    expect(refused(rule, own)).toEqual(own);
    expect(rule.refusal('env.VAULT_TOKEN')).toContain('admin.secret_references.allow');
  });

  it('with an allow list, takes only the references its patterns match', () => {
    const rule = secretReferenceRule({
      allow: ['env.OPENAI_*', 'env.VAULT_TOKEN', 'vault.secret/gw/*', 'aws-sm.arn:aws:secretsmanager:*'],
    });
    expect(
      refused(rule, [
        'env.OPENAI_API_KEY',
        'env.VAULT_TOKEN',
        'vault.secret/gw/openai#api_key',
        'aws-sm.arn:aws:secretsmanager:eu-west-1:1:secret:k',
      ]),
    ).toEqual([]);
    const others = ['env.ANTHROPIC_API_KEY', 'env.XOPENAI_KEY', 'vault.secret/other#k', 'aws-sm.prod/key'];
    expect(refused(rule, others)).toEqual(others);
    expect(rule.refusal('env.ANTHROPIC_API_KEY')).toContain(
      'admin.secret_references.allow of the config file does not list it',
    );
    // A pattern's dots and other characters are literal; only * matches anything.
    expect(secretReferenceRule({ allow: ['vault.a.b/c#k'] }).refusal('vault.aXb/c#k')).toBeDefined();
    expect(refused(secretReferenceRule({ allow: [] }), ['env.HOME', 'vault.a/b#c'])).toHaveLength(2);
  });

  it('is read from the config file, its patterns written as references are', () => {
    // Taken as written: not the value of HOME, nor a secret-manager reference refused outside credentials.
    const allow = ['env.OPENAI_*', 'env.HOME', 'vault.secret/gw/openai#api_key'];
    const config = parseGatewayConfig({ admin: { secret_references: { allow } } }, { HOME: '/root' });
    expect(config.admin.secret_references).toEqual({ allow });
    expect(parseGatewayConfig({}).admin.secret_references).toEqual({});
    expect(() =>
      parseGatewayConfig({ admin: { secret_references: { allow: ['env.OPENAI_*', 'OPENAI_*'] } } }),
    ).toThrow(/admin\.secret_references\.allow\[1\]: 'OPENAI_\*' is not a reference pattern/);
    expect(() => parseGatewayConfig({ admin: { secret_references: { deny: [] } } })).toThrow(
      /admin\.secret_references/,
    );
  });
});
