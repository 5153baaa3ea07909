import {
  type AlertChannel,
  type AlertDispatcher,
  type AlertRegistry,
  type AlertRule,
  alertChannelSchema,
  alertRuleSchema,
  outboundChannelUrls,
} from '@gw/alerts';
import {
  checkOutboundUrl,
  fieldTree,
  GatewayError,
  invalidRequest,
  isPlainObject,
  keepStoredSecrets,
  maskSecret,
  maskSecrets,
  mergePatch,
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

export interface AlertsAdminOptions {
  /** Absent when this admin has no store (every call answers 503). */
  registry?: AlertRegistry | undefined;
  /** Sends the test notifications of `POST /api/alerts/channels/{id}/test`. */
  dispatcher?: AlertDispatcher | undefined;
  /** Why a rule kind cannot be evaluated in this gateway (its source is missing); undefined when it can. */
  unsupported?: ((kind: AlertRule['kind']) => string | undefined) | undefined;
  /** Where channels may send: the config file's outbound address policy (docs/network.md). */
  outbound: OutboundPolicy;
  /** Which references Admin may name in a channel: the config file's `admin.secret_references`. */
  secretReferences: SecretReferenceRule;
}

const HISTORY_MAX_LIMIT = 500;

/** The channels' marks: credentials, destinations (docs/architecture.md "Declared configuration"). */
const channelFields = fieldTree(alertChannelSchema);

/** A Slack webhook's URL is its credential too (its last path segment): shown masked, kept when sent back so. */
function shownSlackUrl(url: string): string {
  return url.replace(/[^/]+$/, (token) => maskSecret(token));
}

/** A channel as answers show it: credentials masked (as provider keys are), so a read leaks none. */
function shownChannel(channel: AlertChannel): AlertChannel {
  const shown = maskSecrets(channelFields, channel);
  return shown.type === 'slack' ? { ...shown, url: shownSlackUrl(shown.url) } : shown;
}

/** A body that sends back what a read showed (a masked secret, a masked URL) keeps the stored value. */
function keepMasked(incoming: Record<string, unknown>, stored: AlertChannel): Record<string, unknown> {
  const kept = keepStoredSecrets(channelFields, incoming, stored);
  if (stored.type === 'slack' && (kept['url'] === shownSlackUrl(stored.url) || kept['url'] === '[redacted]'))
    return { ...kept, url: stored.url };
  return kept;
}

const conflict = (message: string, param: string) => new GatewayError({ type: 'conflict', message, param });

/**
 * `/api/alerts/rules[/{id}]` and `/api/alerts/channels[/{id}]` (list, create 201, read, replace, merge-patch,
 * delete), `POST /api/alerts/channels/{id}/test` and `GET /api/alerts/history?limit&cursor`. Rules and
 * channels live in the store, where the evaluator (whichever replica holds the lease) reads them each interval.
 * A rule naming a channel that does not exist, or a channel still named by a rule being deleted, is refused.
 */
export function createAlertsAdmin(options: AlertsAdminOptions): AdminRoute[] {
  function registryOf(): AlertRegistry {
    if (options.registry) return options.registry;
    throw new GatewayError({
      type: 'service_unavailable',
      message: 'alerts live in the state store, and this admin has none (REDIS_URL)',
    });
  }

  async function checkedRule(registry: AlertRegistry, body: unknown): Promise<AlertRule> {
    const rule = validate(alertRuleSchema, body);
    const missing = options.unsupported?.(rule.kind);
    if (missing) throw invalidRequest(`kind: '${rule.kind}' ${missing}`, 'kind');
    const known = new Set((await registry.listChannels()).map((channel) => channel.id));
    rule.channels.forEach((id, index) => {
      if (!known.has(id))
        throw invalidRequest(`channels.${index}: names no alert channel '${id}'`, `channels.${index}`);
    });
    return rule;
  }

  /** The stored document behind a PATCH, or the 404. */
  function patched(stored: object, patch: Record<string, unknown>, id: string): unknown {
    const merged = mergePatch(stored, patch);
    return isPlainObject(merged) ? { ...merged, id } : merged;
  }

  async function storedRule(id: string): Promise<AlertRule> {
    const stored = await registryOf().getRule(id);
    if (!stored) throw notFound(`alert rule '${id}'`);
    return stored;
  }

  async function storedChannel(id: string): Promise<AlertChannel> {
    const stored = await registryOf().getChannel(id);
    if (!stored) throw notFound(`alert channel '${id}'`);
    return stored;
  }

  async function createRule(request: AdminRequest): Promise<AdminResult> {
    const registry = registryOf();
    const rule = await checkedRule(registry, await request.body());
    if (await registry.getRule(rule.id)) throw conflict(`alert rule '${rule.id}' already exists`, 'id');
    await registry.putRule(rule);
    return { status: 201, body: rule };
  }

  /** PUT replaces a rule, PATCH merges into it (RFC 7396). */
  async function changeRule(request: AdminRequest<{ id: string }>): Promise<AdminResult> {
    const { id } = request.params;
    const registry = registryOf();
    const stored = await storedRule(id);
    const body = await request.body();
    const next = request.method === 'PUT' ? { ...body, id } : patched(stored, body, id);
    const rule = await checkedRule(registry, next);
    await registry.putRule(rule);
    return { status: 200, body: rule };
  }

  async function createChannel(request: AdminRequest): Promise<AdminResult> {
    const registry = registryOf();
    const body = await request.body();
    refuseSecretReferences(alertChannelSchema, body, {
      mayReference: mayReferenceSecrets(request),
      references: options.secretReferences,
    });
    const channel = await allowedChannel(validate(alertChannelSchema, body));
    if (await registry.getChannel(channel.id))
      throw conflict(`alert channel '${channel.id}' already exists`, 'id');
    await registry.putChannel(channel);
    return { status: 201, body: shownChannel(channel) };
  }

  /** PUT replaces a channel, PATCH merges into it; masked secrets sent back keep the stored ones. */
  async function changeChannel(request: AdminRequest<{ id: string }>): Promise<AdminResult> {
    const { id } = request.params;
    const stored = await storedChannel(id);
    const body = keepMasked(await request.body(), stored);
    const next = request.method === 'PUT' ? { ...body, id } : patched(stored, body, id);
    refuseSecretReferences(alertChannelSchema, next, {
      mayReference: mayReferenceSecrets(request),
      references: options.secretReferences,
      stored,
    });
    const channel = await allowedChannel(validate(alertChannelSchema, next));
    refuseMovedSecrets(alertChannelSchema, channel, { mayReference: mayReferenceSecrets(request), stored });
    await registryOf().putChannel(channel);
    return { status: 200, body: shownChannel(channel) };
  }

  async function deleteChannel(id: string): Promise<AdminResult> {
    const registry = registryOf();
    await storedChannel(id);
    const users = (await registry.listRules())
      .filter((rule) => rule.channels.includes(id))
      .map((rule) => rule.id);
    if (users.length > 0) {
      throw conflict(
        `alert channel '${id}' is still used by the rules ${users.map((rule) => `'${rule}'`).join(', ')}`,
        'id',
      );
    }
    await registry.deleteChannel(id);
    return { status: 200, body: { deleted: id } };
  }

  /** A channel whose receiver the outbound address policy allows (the dispatcher checks again at connect). */
  async function allowedChannel(channel: AlertChannel): Promise<AlertChannel> {
    for (const { field, url } of outboundChannelUrls(channel)) {
      await checkOutboundUrl(url, options.outbound, {
        field,
        protocols: ['http:', 'https:', 'smtp:'],
      });
    }
    return channel;
  }

  async function sendTest(channel: AlertChannel) {
    if (!options.dispatcher) {
      throw new GatewayError({
        type: 'service_unavailable',
        message: 'this admin sends no alerts (it has no state store)',
      });
    }
    const time = Date.now();
    return options.dispatcher.deliver(
      {
        action: 'test',
        rule_id: 'test',
        kind: 'test',
        subject: channel.id,
        severity: 'info',
        summary: `Test notification from gw to channel ${channel.id}`,
        dedup_key: `gw:test:${channel.id}:${time}`,
        time,
        details: { channel: channel.id, type: channel.type },
      },
      channel,
    );
  }

  async function history(request: AdminRequest): Promise<AdminResult> {
    const query = request.query ?? new URLSearchParams();
    const limitText = query.get('limit') ?? '50';
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > HISTORY_MAX_LIMIT) {
      throw invalidRequest(`limit: must be a whole number from 1 to ${HISTORY_MAX_LIMIT}`, 'limit');
    }
    const cursor = query.get('cursor') ?? undefined;
    if (cursor !== undefined && !/^\d{15}-[0-9a-f]{8}$/.test(cursor)) {
      throw invalidRequest('cursor: is not a cursor this API gave out', 'cursor');
    }
    return { status: 200, body: await registryOf().history({ limit, cursor }) };
  }

  const read = 'alerts:read';
  const write = 'alerts:write';
  return [
    {
      method: 'GET',
      path: '/alerts/rules',
      permission: read,
      handle: async () => ({ status: 200, body: await registryOf().listRules() }),
    },
    { method: 'POST', path: '/alerts/rules', permission: write, handle: createRule },
    route({
      method: 'GET',
      path: '/alerts/rules/:id',
      permission: read,
      handle: async ({ params: { id } }) => ({ status: 200, body: await storedRule(id) }),
    }),
    route({ method: 'PUT', path: '/alerts/rules/:id', permission: write, handle: changeRule }),
    route({ method: 'PATCH', path: '/alerts/rules/:id', permission: write, handle: changeRule }),
    route({
      method: 'DELETE',
      path: '/alerts/rules/:id',
      permission: write,
      handle: async ({ params: { id } }) => {
        await storedRule(id);
        await registryOf().deleteRule(id);
        return { status: 200, body: { deleted: id } };
      },
    }),
    {
      method: 'GET',
      path: '/alerts/channels',
      permission: read,
      handle: async () => ({ status: 200, body: (await registryOf().listChannels()).map(shownChannel) }),
    },
    { method: 'POST', path: '/alerts/channels', permission: write, handle: createChannel },
    route({
      method: 'GET',
      path: '/alerts/channels/:id',
      permission: read,
      handle: async ({ params: { id } }) => ({ status: 200, body: shownChannel(await storedChannel(id)) }),
    }),
    route({ method: 'PUT', path: '/alerts/channels/:id', permission: write, handle: changeChannel }),
    route({ method: 'PATCH', path: '/alerts/channels/:id', permission: write, handle: changeChannel }),
    route({
      method: 'DELETE',
      path: '/alerts/channels/:id',
      permission: write,
      handle: async ({ params: { id } }) => deleteChannel(id),
    }),
    route({
      method: 'POST',
      path: '/alerts/channels/:id/test',
      permission: write,
      handle: async ({ params: { id } }) => ({ status: 200, body: await sendTest(await storedChannel(id)) }),
    }),
    { method: 'GET', path: '/alerts/history', permission: read, handle: history },
  ];
}
