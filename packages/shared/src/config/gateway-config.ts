import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { loadBalancerConfigSchema } from '../health/load-balancer-config.ts';
import {
  businessUnitSchema,
  customerSchema,
  modelAliasSchema,
  teamSchema,
  userSchema,
  virtualKeySchema,
} from '../schemas/governance.ts';
import { guardrailsConfigSchema } from '../schemas/guardrails.ts';
import { mcpSettingsSchema } from '../schemas/mcp.ts';
import { providerConfigSchema, providerNameSchema } from '../schemas/providers.ts';
import { configRoutingRuleSchema } from '../schemas/routing.ts';
import { adminConfigSchema, auditConfigSchema, originOrAnySchema } from './admin-config.ts';
import { alertsConfigSchema } from './alerts-config.ts';
import { authConfigSchema } from './auth-config.ts';
import { cacheConfigSchema } from './cache-config.ts';
import { fieldTree, liveSection, restartOnly, restartSection } from './declared-fields.ts';
import { mapFields } from './declared-values.ts';
import { envReferenceName } from './env-reference.ts';
import { logsConfigSchema } from './logs-config.ts';
import { networkPolicySchema } from './network-policy.ts';
import { priceOverridesSchema, unpricedModelPriceSchema } from './pricing-config.ts';
import { parseSecretReference } from './secret-reference.ts';
import { tracingConfigSchema } from './tracing-config.ts';
import { vaultConfigSchema } from './vault-config.ts';

/**
 * The client settings. Each field's `description` (and `unit`) is what the console shows beside it: the schema
 * declares it once (docs/ui.md "System config").
 */
export const clientConfigSchema = z
  .strictObject({
    enforce_virtual_keys: z
      .boolean()
      .meta({ description: 'Every inference request must carry a virtual key (401 virtual_key_required).' })
      .default(false),
    required_headers: z
      .array(z.string().min(1).toLowerCase())
      .meta({
        description: 'Header names every LLM and MCP request must carry (400 missing_required_header).',
      })
      .default([]),
    max_request_body_bytes: z
      .number()
      .int()
      .positive()
      .max(512 * 1024 * 1024)
      .meta({ description: 'The largest request body accepted (413 past it).', unit: 'bytes' })
      .default(10 * 1024 * 1024),
    send_raw_response: z
      .boolean()
      .meta({ description: "Include the provider's own answer as extra_fields.raw_response." })
      .default(true),
    max_fallbacks: z
      .number()
      .int()
      .min(0)
      .max(100)
      .meta({
        description: 'Most fallbacks one request may name (more is a 400): each can cost upstream calls.',
        unit: 'targets',
      })
      .default(5),
    max_attempts: z
      .number()
      .int()
      .positive()
      .max(100)
      .meta({
        description:
          'Most upstream calls one request may cause, across its targets and their retries together.',
        unit: 'calls',
      })
      .default(10),
    allow_anonymous_admin: z
      .boolean()
      .meta({
        description: 'Serve the admin API without a credential: anyone who reaches its port is Admin.',
      })
      .default(false),
    cors_allowed_origins: z
      .array(originOrAnySchema)
      .max(100)
      .meta({
        description:
          "Web pages (origins) whose scripts may call the inference API with a virtual key: the console's own origin when the admin serves it on another port or host than the ingress. '*': any page, only while virtual keys are enforced.",
      })
      .default([]),
    public_url: z
      .url({ protocol: /^https?$/, error: 'is not an http(s) URL' })
      .meta({
        description:
          "Where apps reach gw's inference API (the ingress, or a proxy in front), for the console's snippets and playground. Empty: the console's own address when it serves /v1, else GW_PUBLIC_URL.",
      })
      .optional(),
  })
  .refine((client) => client.enforce_virtual_keys || !client.cors_allowed_origins.includes('*'), {
    path: ['cors_allowed_origins'],
    error: "'*' lets every web page call gw: allowed only with client.enforce_virtual_keys: true",
  });

export const governanceSettingsSchema = z.strictObject({
  strict_budgets: z
    .boolean()
    .meta({
      description: 'Reserve the worst-case cost of a request before it runs, so a budget never goes over.',
    })
    .default(false),
  settle_deadline_ms: z
    .number()
    .int()
    .positive()
    .meta({
      description:
        'A reservation not settled by then (a process died mid-request) is charged at its estimate.',
      unit: 'ms',
    })
    .default(900_000),
  sweep_interval_ms: restartOnly(
    z
      .number()
      .int()
      .min(0)
      .meta({ description: 'How often unsettled reservations are looked for.', unit: 'ms' }),
  ).default(30_000),
  default_max_completion_tokens: z
    .number()
    .int()
    .positive()
    .meta({
      description:
        'Completion tokens assumed for a request that sets no max_tokens (strict reservations, estimates).',
      unit: 'tokens',
    })
    .default(4096),
  expected_completion_tokens: z
    .number()
    .int()
    .min(0)
    .meta({
      description:
        'Completion tokens a request is expected to use, reserved at admission in default mode (at most its max_tokens), so that concurrent requests see each other before they settle.',
      unit: 'tokens',
    })
    .default(256),
  /**
   * What a model without a price (neither built in nor in `pricing`) costs under a budget: this price (USD per
   * million tokens), or, when unset, such a request is refused (403 model_not_allowed) rather than served free.
   * `PUT /api/pricing/unpriced` changes it.
   */
  unpriced_model_price: unpricedModelPriceSchema
    .meta({
      description:
        'What a model without a price costs under a budget; unset, such a request is refused (403). The Pricing page sets it.',
    })
    .optional(),
});

const idField = { id: z.string().min(1).optional() };

/**
 * A section gw does not act on yet: refused rather than accepted and ignored, so an operator never believes a
 * control is on when it is not.
 */
function notYetSupported(reason: string) {
  return z
    .unknown()
    .refine((value) => value === undefined, { error: `is not supported yet (${reason}); remove it` })
    .optional();
}

export const gatewayConfigSchema = z.strictObject({
  client: liveSection(clientConfigSchema).default(clientConfigSchema.parse({})),
  /** Seeds the providers, which `/api/providers` manages (live). */
  providers: liveSection(z.record(providerNameSchema, providerConfigSchema)).default({}),
  governance: liveSection(
    z.strictObject({
      /** Virtual keys and their owners seed the store, which `/api/governance/*` manages (live). */
      virtual_keys: z
        .array(virtualKeySchema.extend({ ...idField, value: z.string().optional() }))
        .default([]),
      customers: z.array(customerSchema.extend(idField)).default([]),
      teams: z.array(teamSchema.extend(idField)).default([]),
      users: z.array(userSchema.extend(idField)).default([]),
      business_units: z.array(businessUnitSchema.extend(idField)).default([]),
      /** The gateway's model aliases (every key's, after a key's own). */
      model_aliases: z.array(modelAliasSchema.extend(idField)).default([]),
      /** Routing rules (docs/routing.md); `/api/governance/routing-rules` manages them (live). */
      routing_rules: z.array(configRoutingRuleSchema).max(1000).default([]),
      budgets: notYetSupported('budgets are set on virtual keys, teams, customers and business units'),
      settings: liveSection(governanceSettingsSchema).default(governanceSettingsSchema.parse({})),
      /** Price overrides per model (docs/pricing.md); `/api/pricing` manages them (live). */
      pricing: liveSection(priceOverridesSchema).default({}),
    }),
  ).default({
    virtual_keys: [],
    customers: [],
    teams: [],
    users: [],
    business_units: [],
    model_aliases: [],
    routing_rules: [],
    settings: governanceSettingsSchema.parse({}),
    pricing: {},
  }),
  mcp: liveSection(mcpSettingsSchema).default(mcpSettingsSchema.parse({})),
  /** Health-aware routing (docs/routing-health.md); `PUT /api/load-balancer/config` changes it live. */
  load_balancer: liveSection(loadBalancerConfigSchema).default(loadBalancerConfigSchema.parse({})),
  /** Guardrail profiles and rules (docs/guardrails.md); the admin API adds more at run time. */
  guardrails: liveSection(guardrailsConfigSchema).default({ profiles: [], rules: [] }),
  /** OpenTelemetry tracing (docs/tracing.md); off by default. */
  tracing: restartSection(tracingConfigSchema).default(tracingConfigSchema.parse({})),
  /** The response cache (docs/cache.md); off by default. */
  cache: liveSection(cacheConfigSchema).default(cacheConfigSchema.parse({})),
  /** The alert evaluator (docs/alerts.md); rules and channels are managed through `/api/alerts`. */
  alerts: restartSection(alertsConfigSchema).default(alertsConfigSchema.parse({})),
  /** Secret managers that `vault.…`, `aws-sm.…`, `gcp-sm.…` and `azure-kv.…` references read (docs/vault.md). */
  vault: restartSection(vaultConfigSchema).default(vaultConfigSchema.parse({})),
  /** Request logs (docs/logs.md): on, metadata only, by default. */
  logs: liveSection(logsConfigSchema).default(logsConfigSchema.parse({})),
  /** Single sign-on and role mappings of the admin API (docs/admin-access.md); read at start. */
  auth: restartSection(authConfigSchema).default(authConfigSchema.parse({})),
  /** Where gw may send requests it makes for an operator (docs/network.md); config file only, read at start. */
  network: restartSection(networkPolicySchema).default(networkPolicySchema.parse({})),
  /** The admin API's own settings (docs/admin-access.md): origins allowed besides its own; read at start. */
  admin: restartSection(adminConfigSchema).default(adminConfigSchema.parse({})),
  /** The audit log (docs/admin-access.md "Audit log"): what a change does while its store is down; read at start. */
  audit: restartSection(auditConfigSchema).default(auditConfigSchema.parse({})),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
export type ClientConfig = z.infer<typeof clientConfigSchema>;
export type GovernanceSettings = z.infer<typeof governanceSettingsSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Replaces `env.NAME` strings by the variable's value, except in credential fields (declared `secret` in the
 * schema: provider keys, guardrail and alert credentials), which keep the reference and read it at use, so the
 * store never holds the secret; a reference there to an unset variable fails here all the same. Secret-manager
 * references (`vault.…`) are taken by credential fields only: anywhere else they would be sent as written.
 */
function resolveReferences(document: unknown, env: NodeJS.ProcessEnv): unknown {
  return mapFields(fieldTree(gatewayConfigSchema), document, ({ path, value, secret, verbatim }) => {
    if (typeof value !== 'string' || verbatim) return value;
    const reference = parseSecretReference(value);
    if (reference instanceof Error && secret) throw new ConfigError(`${path}: ${reference.message}`);
    if (reference && !(reference instanceof Error)) {
      if (secret) return value;
      throw new ConfigError(
        `${path}: '${value}': secret-manager references are taken by credential fields only (provider keys, guardrail and alert credentials)`,
      );
    }
    const name = envReferenceName(value);
    if (name === undefined) return value;
    if (env[name] === undefined) throw new ConfigError(`${path}: environment variable ${name} is not set`);
    return secret ? value : env[name];
  });
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((text, part) => {
    if (typeof part === 'number') return `${text}[${part}]`;
    return text ? `${text}.${String(part)}` : String(part);
  }, '');
}

/**
 * Validates a parsed config document; errors name the field, all on one line. `env`: where `env.NAME`
 * references resolve (the process's environment, handed over by main; none by default).
 */
export function parseGatewayConfig(document: unknown, env: NodeJS.ProcessEnv = {}): GatewayConfig {
  const resolved = resolveReferences(document ?? {}, env);
  const result = gatewayConfigSchema.safeParse(resolved);
  if (!result.success) {
    const lines = result.error.issues.map(
      (issue) => `${formatPath(issue.path) || '(root)'}: ${issue.message}`,
    );
    throw new ConfigError(`invalid gateway config: ${lines.join('; ')}`);
  }
  return result.data;
}

/** Reads the config file GATEWAY_CONFIG names (JSON or YAML); no file means the defaults. */
export async function loadGatewayConfig(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<GatewayConfig> {
  if (!path) return parseGatewayConfig({}, env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`GATEWAY_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      `GATEWAY_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    );
  }
  return parseGatewayConfig(document, env);
}
