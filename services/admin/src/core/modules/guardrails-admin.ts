import { checkProfile, compileRuleCondition, GuardrailConfigError } from '@gw/guardrails';
import type { GuardrailRegistry } from '@gw/guardrails/registry';
import {
  checkDestinations,
  fieldTree,
  GatewayError,
  type GuardrailProfile,
  type GuardrailRule,
  guardrailProfileSchema,
  guardrailProviderFormSchema,
  guardrailRuleSchema,
  invalidRequest,
  keepStoredSecrets,
  maskSecrets,
  notFound,
  type OutboundPolicy,
  refuseMovedSecrets,
  refuseSecretReferences,
  type SecretReferenceRule,
  validate,
} from '@gw/shared';
import { mayReferenceSecrets } from '../access/permissions.ts';
import type { AdminRequest, AdminResult } from '../http/admin-route.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';

export interface GuardrailsAdminOptions {
  /** Absent when this admin has no store (every call answers 503). */
  registry?: GuardrailRegistry | undefined;
  /** Where remote profiles may send: the config file's outbound address policy (docs/network.md). */
  outbound: OutboundPolicy;
  /** Which references Admin may name in a profile: the config file's `admin.secret_references`. */
  secretReferences: SecretReferenceRule;
}

/** The profiles' marks: credentials, destinations (docs/architecture.md "Declared configuration"). */
const profileFields = fieldTree(guardrailProfileSchema);

/** A profile as answers show it: credentials masked, URLs without their secrets. */
function shownProfile(profile: GuardrailProfile): GuardrailProfile {
  return maskSecrets(profileFields, profile);
}

/** A PUT that sends back a masked credential (as GET showed it) keeps the stored one. */
function keepMaskedSecrets(incoming: Record<string, unknown>, stored: GuardrailProfile | undefined) {
  return keepStoredSecrets(profileFields, incoming, stored);
}

function asBadRequest<Value>(work: () => Value): Value {
  try {
    return work();
  } catch (error) {
    if (error instanceof GuardrailConfigError) throw invalidRequest(error.message, error.field);
    throw error;
  }
}

/**
 * `/api/guardrails/profiles[/{id}]` and `/api/guardrails/rules[/{id}]` (list, create 201, read, replace,
 * delete), and SPEC.md's `POST /api/enterprise/guardrails/providers`. Everything lives in the store; every
 * ingress recompiles on the change notice. A rule whose condition does not compile, or that names a profile
 * that does not exist, is a 400 naming the field.
 */
export function createGuardrailsAdmin(options: GuardrailsAdminOptions): AdminRoute[] {
  function registryOf(): GuardrailRegistry {
    if (options.registry) return options.registry;
    throw new GatewayError({
      type: 'service_unavailable',
      message: 'guardrails live in the state store, and this admin has none (REDIS_URL)',
    });
  }

  async function saveProfile(
    registry: GuardrailRegistry,
    body: unknown,
    write: { request: AdminRequest; stored?: GuardrailProfile | undefined; prefix?: string },
  ): Promise<AdminResult> {
    const create = write.stored === undefined;
    // Credentials (`api_key`, `secret`, `access_key`…) are resolved by every ingress from its own environment.
    const policy = {
      mayReference: mayReferenceSecrets(write.request),
      references: options.secretReferences,
      stored: write.stored,
      prefix: write.prefix,
    };
    refuseSecretReferences(guardrailProfileSchema, body, policy);
    const profile = validate(guardrailProfileSchema, body);
    // A stored credential (sent back masked) goes nowhere new unless Admin says so.
    refuseMovedSecrets(guardrailProfileSchema, profile, policy);
    asBadRequest(() => checkProfile(profile));
    // The ingresses check again at every connection; here for a plain answer, before anything is stored.
    await checkDestinations(guardrailProfileSchema, profile, options.outbound, { prefix: write.prefix });
    if (create && (await registry.getProfile(profile.id))) {
      throw new GatewayError({
        type: 'conflict',
        message: `guardrail profile '${profile.id}' already exists`,
        param: 'id',
      });
    }
    await registry.putProfile(profile);
    return { status: create ? 201 : 200, body: shownProfile(profile) };
  }

  async function checkedRule(registry: GuardrailRegistry, body: unknown): Promise<GuardrailRule> {
    const rule = validate(guardrailRuleSchema, body);
    asBadRequest(() => compileRuleCondition(rule, 'rule'));
    const known = new Set((await registry.listProfiles()).map((profile) => profile.id));
    for (const side of ['input_profiles', 'output_profiles'] as const) {
      rule[side].forEach((id, index) => {
        if (!known.has(id))
          throw invalidRequest(`${side}[${index}]: names no guardrail profile '${id}'`, side);
      });
    }
    return rule;
  }

  const profileRoutes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/guardrails/profiles',
      permission: 'guardrails:read',
      handle: async () => ({ status: 200, body: (await registryOf().listProfiles()).map(shownProfile) }),
    },
    {
      method: 'POST',
      path: '/guardrails/profiles',
      permission: 'guardrails:write',
      handle: async (request) => saveProfile(registryOf(), await request.body(), { request }),
    },
    route({
      method: 'GET',
      path: '/guardrails/profiles/:id',
      permission: 'guardrails:read',
      handle: async ({ params: { id } }) => {
        const stored = await registryOf().getProfile(id);
        if (!stored) throw notFound(`guardrail profile '${id}'`);
        return { status: 200, body: shownProfile(stored) };
      },
    }),
    route({
      method: 'PUT',
      path: '/guardrails/profiles/:id',
      permission: 'guardrails:write',
      handle: async (request) => {
        const { id } = request.params;
        const registry = registryOf();
        const stored = await registry.getProfile(id);
        if (!stored) throw notFound(`guardrail profile '${id}'`);
        return saveProfile(
          registry,
          { ...keepMaskedSecrets(await request.body(), stored), id },
          { request, stored },
        );
      },
    }),
    route({
      method: 'DELETE',
      path: '/guardrails/profiles/:id',
      permission: 'guardrails:write',
      handle: async ({ params: { id } }) => {
        if (!(await registryOf().deleteProfile(id))) throw notFound(`guardrail profile '${id}'`);
        return { status: 200, body: { deleted: id } };
      },
    }),
  ];

  /** The stored rule, or the 404. */
  async function storedRule(registry: GuardrailRegistry, id: string): Promise<GuardrailRule> {
    const stored = await registry.getRule(id);
    if (!stored) throw notFound(`guardrail rule '${id}'`);
    return stored;
  }

  const ruleRoutes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/guardrails/rules',
      permission: 'guardrails:read',
      handle: async () => ({ status: 200, body: await registryOf().listRules() }),
    },
    {
      method: 'POST',
      path: '/guardrails/rules',
      permission: 'guardrails:write',
      handle: async (request) => {
        const registry = registryOf();
        const rule = await checkedRule(registry, await request.body());
        if (await registry.getRule(rule.id)) {
          throw new GatewayError({
            type: 'conflict',
            message: `guardrail rule '${rule.id}' already exists`,
            param: 'id',
          });
        }
        await registry.putRule(rule);
        return { status: 201, body: rule };
      },
    },
    route({
      method: 'GET',
      path: '/guardrails/rules/:id',
      permission: 'guardrails:read',
      handle: async ({ params: { id } }) => ({ status: 200, body: await storedRule(registryOf(), id) }),
    }),
    route({
      method: 'PUT',
      path: '/guardrails/rules/:id',
      permission: 'guardrails:write',
      handle: async (request) => {
        const { id } = request.params;
        const registry = registryOf();
        await storedRule(registry, id);
        const rule = await checkedRule(registry, { ...(await request.body()), id });
        await registry.putRule(rule);
        return { status: 200, body: rule };
      },
    }),
    route({
      method: 'DELETE',
      path: '/guardrails/rules/:id',
      permission: 'guardrails:write',
      handle: async ({ params: { id } }) => {
        const registry = registryOf();
        await storedRule(registry, id);
        await registry.deleteRule(id);
        return { status: 200, body: { deleted: id } };
      },
    }),
  ];

  /** SPEC.md's API form: `provider_name`, `policy_name`, `enabled`, `config` (Bedrock: `guardrail_arn`, …). */
  async function enterprise(request: AdminRequest): Promise<AdminResult> {
    const registry = registryOf();
    const form = validate(guardrailProviderFormSchema, await request.body());
    const { guardrail_arn, guardrail_version, ...config } = form.config;
    const body = {
      ...config,
      ...(guardrail_arn !== undefined ? { guardrail_id: guardrail_arn } : {}),
      ...(guardrail_version !== undefined ? { version: guardrail_version } : {}),
      id: form.policy_name,
      type: form.provider_name,
      enabled: form.enabled,
    };
    const profile = guardrailProfileSchema.safeParse(body);
    if (!profile.success) {
      const issue = profile.error.issues[0]!;
      const field = issue.path.map(String).join('.');
      const named =
        field === 'guardrail_id' ? 'guardrail_arn' : field === 'version' ? 'guardrail_version' : field;
      throw invalidRequest(`config.${named}: ${issue.message}`, `config.${named}`);
    }
    return saveProfile(registry, profile.data, { request, prefix: 'config.' });
  }

  return [
    ...profileRoutes,
    ...ruleRoutes,
    { ...profileRoutes[0]!, path: '/enterprise/guardrails/providers' },
    {
      method: 'POST',
      path: '/enterprise/guardrails/providers',
      permission: 'guardrails:write',
      handle: enterprise,
    },
  ];
}
