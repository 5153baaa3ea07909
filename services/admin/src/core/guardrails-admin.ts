import { checkProfile, compileRuleCondition, GuardrailConfigError } from '@gw/guardrails';
import type { GuardrailRegistry } from '@gw/guardrails/registry';
import {
  checkOutboundUrl,
  GatewayError,
  GUARDRAIL_SECRET_FIELDS,
  type GuardrailProfile,
  type GuardrailRule,
  guardrailProfileSchema,
  guardrailProviderFormSchema,
  guardrailRuleSchema,
  invalidRequest,
  maskSecret,
  methodNotAllowed,
  noEndpoint,
  notFound,
  type OutboundPolicy,
  outboundPolicy,
  redactUrl,
  refuseMovedSecrets,
  refuseSecretReferences,
  standsForSecret,
  validate,
} from '@gw/shared';
import type { AdminRequest, AdminResult } from './admin-app.ts';
import { mayReferenceSecrets } from './permissions.ts';

export interface GuardrailsAdminOptions {
  /** Absent when this admin has no store (every call answers 503). */
  registry?: GuardrailRegistry | undefined;
  /** Where remote profiles may send: the config file's outbound address policy (docs/network.md). */
  outbound?: OutboundPolicy | undefined;
}

/** The URL a remote profile sends to, with its field: the webhook's, Azure's endpoint, a Bedrock endpoint. */
function profileUrl(profile: GuardrailProfile): { field: string; url: string } | undefined {
  if (profile.type === 'webhook') return { field: 'url', url: profile.url };
  if (profile.type === 'azure_content_safety') return { field: 'endpoint', url: profile.endpoint };
  if (profile.type === 'bedrock' && profile.endpoint) return { field: 'endpoint', url: profile.endpoint };
  return undefined;
}

/** A profile as answers show it: credentials masked, URLs without their secrets. */
function shownProfile(profile: GuardrailProfile): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...profile };
  for (const field of GUARDRAIL_SECRET_FIELDS) {
    const value = shown[field];
    if (typeof value === 'string') shown[field] = maskSecret(value);
  }
  if (profile.type === 'webhook') {
    shown['url'] = redactUrl(profile.url);
    // A receiver's headers exist to carry its credentials, whatever their names: every value is masked.
    if (profile.headers) {
      shown['headers'] = Object.fromEntries(
        Object.entries(profile.headers).map(([name, value]) => [name, maskSecret(value)]),
      );
    }
  }
  return shown;
}

/** A PUT that sends back a masked credential (as GET showed it) keeps the stored one. */
function keepMaskedSecrets(incoming: Record<string, unknown>, stored: GuardrailProfile | undefined) {
  if (!stored) return incoming;
  const kept = { ...incoming };
  for (const field of GUARDRAIL_SECRET_FIELDS) {
    const previous = (stored as Record<string, unknown>)[field];
    if (typeof previous === 'string' && standsForSecret(kept[field], previous)) kept[field] = previous;
  }
  const headers = kept['headers'];
  if (stored.type === 'webhook' && stored.headers && headers && typeof headers === 'object') {
    kept['headers'] = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => {
        const previous = stored.headers?.[name];
        return [name, previous !== undefined && standsForSecret(value, previous) ? previous : value];
      }),
    );
  }
  return kept;
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
export function createGuardrailsAdmin(options: GuardrailsAdminOptions) {
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
    refuseSecretReferences(body, {
      mayReference: mayReferenceSecrets(write.request),
      stored: write.stored,
      prefix: write.prefix,
    });
    const profile = validate(guardrailProfileSchema, body);
    // A stored credential (sent back masked) goes nowhere new unless Admin says so.
    refuseMovedSecrets(profile, { mayReference: mayReferenceSecrets(write.request), stored: write.stored });
    asBadRequest(() => checkProfile(profile));
    // The ingresses check again at every connection; here for a plain answer, before anything is stored.
    const target = profileUrl(profile);
    if (target)
      await checkOutboundUrl(target.url, options.outbound ?? outboundPolicy(), { field: target.field });
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

  async function profiles(request: AdminRequest, path: string, id: string | undefined): Promise<AdminResult> {
    const registry = registryOf();
    if (id === undefined) {
      if (request.method === 'GET')
        return { status: 200, body: (await registry.listProfiles()).map(shownProfile) };
      if (request.method === 'POST') return saveProfile(registry, await request.body(), { request });
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    }
    const stored = await registry.getProfile(id);
    if (request.method === 'GET') {
      if (!stored) throw notFound(`guardrail profile '${id}'`);
      return { status: 200, body: shownProfile(stored) };
    }
    if (request.method === 'PUT') {
      if (!stored) throw notFound(`guardrail profile '${id}'`);
      return saveProfile(
        registry,
        { ...keepMaskedSecrets(await request.body(), stored), id },
        { request, stored },
      );
    }
    if (request.method === 'DELETE') {
      if (!(await registry.deleteProfile(id))) throw notFound(`guardrail profile '${id}'`);
      return { status: 200, body: { deleted: id } };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT or DELETE' });
  }

  async function rules(request: AdminRequest, path: string, id: string | undefined): Promise<AdminResult> {
    const registry = registryOf();
    if (id === undefined) {
      if (request.method === 'GET') return { status: 200, body: await registry.listRules() };
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
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
    }
    const stored = await registry.getRule(id);
    if (!stored) throw notFound(`guardrail rule '${id}'`);
    if (request.method === 'GET') return { status: 200, body: stored };
    if (request.method === 'PUT') {
      const rule = await checkedRule(registry, { ...(await request.body()), id });
      await registry.putRule(rule);
      return { status: 200, body: rule };
    }
    if (request.method === 'DELETE') {
      await registry.deleteRule(id);
      return { status: 200, body: { deleted: id } };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT or DELETE' });
  }

  async function guardrails(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, collection, id, ...rest] = request.segments;
    if (rest.length > 0) throw noEndpoint(request.method, path);
    if (collection === 'profiles') return profiles(request, path, id);
    if (collection === 'rules') return rules(request, path, id);
    throw noEndpoint(request.method, path);
  }

  /** SPEC.md's API form: `provider_name`, `policy_name`, `enabled`, `config` (Bedrock: `guardrail_arn`, …). */
  async function enterprise(request: AdminRequest, path: string): Promise<AdminResult> {
    if (request.segments.join('/') !== 'enterprise/guardrails/providers')
      throw noEndpoint(request.method, path);
    const registry = registryOf();
    if (request.method === 'GET')
      return { status: 200, body: (await registry.listProfiles()).map(shownProfile) };
    if (request.method !== 'POST')
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    const form = validate(guardrailProviderFormSchema, await request.body());
    refuseSecretReferences(form.config, { mayReference: mayReferenceSecrets(request), prefix: 'config.' });
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
    return saveProfile(registry, profile.data, { request });
  }

  return { guardrails, enterprise };
}
