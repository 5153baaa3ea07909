import {
  type AlertChannel,
  type AlertDispatcher,
  type AlertRegistry,
  type AlertRule,
  alertChannelSchema,
  alertRuleSchema,
  CHANNEL_SECRET_FIELDS,
  outboundChannelUrls,
} from '@gw/alerts';
import {
  checkOutboundUrl,
  GatewayError,
  invalidRequest,
  isPlainObject,
  maskSecret,
  mergePatch,
  methodNotAllowed,
  noEndpoint,
  notFound,
  type OutboundPolicy,
  outboundPolicy,
  redactUrl,
  refuseMovedSecrets,
  refuseSecretReferences,
  urlSecrets,
  validate,
} from '@gw/shared';
import type { AdminRequest, AdminResult } from './admin-app.ts';
import { mayReferenceSecrets } from './permissions.ts';

export interface AlertsAdminOptions {
  /** Absent when this admin has no store (every call answers 503). */
  registry?: AlertRegistry | undefined;
  /** Sends the test notifications of `POST /api/alerts/channels/{id}/test`. */
  dispatcher?: AlertDispatcher | undefined;
  /** Why a rule kind cannot be evaluated in this gateway (its source is missing); undefined when it can. */
  unsupported?: ((kind: AlertRule['kind']) => string | undefined) | undefined;
  /** Where channels may send: the config file's outbound address policy (docs/network.md); defaults if absent. */
  outbound?: OutboundPolicy | undefined;
}

const HISTORY_MAX_LIMIT = 500;

/** A URL as answers show it: a Slack webhook's last path segment is its secret, a webhook's password too. */
function shownUrl(channel: AlertChannel): string | undefined {
  if (channel.type === 'slack') return channel.url.replace(/[^/]+$/, (token) => maskSecret(token));
  if (channel.type === 'webhook' && urlSecrets(channel.url).length > 0) return redactUrl(channel.url);
  return undefined;
}

/** A channel as answers show it: credentials masked (as provider keys are), so a read leaks none. */
function shownChannel(channel: AlertChannel): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...channel };
  for (const field of CHANNEL_SECRET_FIELDS[channel.type]) {
    const value = shown[field];
    if (typeof value === 'string') shown[field] = maskSecret(value);
  }
  const url = shownUrl(channel);
  if (url !== undefined) shown['url'] = url;
  if (channel.type === 'webhook' && channel.headers) {
    shown['headers'] = Object.fromEntries(Object.keys(channel.headers).map((name) => [name, '****']));
  }
  return shown;
}

/** A body that sends back what a read showed (a masked secret, a masked URL, masked headers) keeps the stored value. */
function keepMasked(incoming: Record<string, unknown>, stored: AlertChannel): Record<string, unknown> {
  const shown = shownChannel(stored);
  const kept = { ...incoming };
  for (const field of [...CHANNEL_SECRET_FIELDS[stored.type], 'url']) {
    const previous = (stored as Record<string, unknown>)[field];
    // `[redacted]`: the read of a caller without secrets:read.
    if (previous !== undefined && (kept[field] === shown[field] || kept[field] === '[redacted]')) {
      kept[field] = previous;
    }
  }
  const headers = kept['headers'];
  if (stored.type === 'webhook' && stored.headers && isPlainObject(headers)) {
    kept['headers'] = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => {
        const previous = stored.headers?.[name];
        const masked = value === '****' || value === '[redacted]';
        return [name, previous !== undefined && masked ? previous : value];
      }),
    );
  }
  return kept;
}

const conflict = (message: string, param: string) => new GatewayError({ type: 'conflict', message, param });

/**
 * `/api/alerts/rules[/{id}]` and `/api/alerts/channels[/{id}]` (list, create 201, read, replace, merge-patch,
 * delete), `POST /api/alerts/channels/{id}/test` and `GET /api/alerts/history?limit&cursor`. Rules and
 * channels live in the store, where the evaluator (whichever replica holds the lease) reads them each interval.
 * A rule naming a channel that does not exist, or a channel still named by a rule being deleted, is refused.
 */
export function createAlertsAdmin(options: AlertsAdminOptions) {
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

  async function rules(request: AdminRequest, path: string, id: string | undefined): Promise<AdminResult> {
    const registry = registryOf();
    if (id === undefined) {
      if (request.method === 'GET') return { status: 200, body: await registry.listRules() };
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
      const rule = await checkedRule(registry, await request.body());
      if (await registry.getRule(rule.id)) throw conflict(`alert rule '${rule.id}' already exists`, 'id');
      await registry.putRule(rule);
      return { status: 201, body: rule };
    }
    const stored = await registry.getRule(id);
    if (!stored) throw notFound(`alert rule '${id}'`);
    if (request.method === 'GET') return { status: 200, body: stored };
    if (request.method === 'PUT' || request.method === 'PATCH') {
      const body = await request.body();
      const next = request.method === 'PUT' ? { ...body, id } : patched(stored, body, id);
      const rule = await checkedRule(registry, next);
      await registry.putRule(rule);
      return { status: 200, body: rule };
    }
    if (request.method === 'DELETE') {
      await registry.deleteRule(id);
      return { status: 200, body: { deleted: id } };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT, PATCH or DELETE' });
  }

  async function channels(
    request: AdminRequest,
    path: string,
    id: string | undefined,
    action: string | undefined,
  ): Promise<AdminResult> {
    const registry = registryOf();
    if (id === undefined) {
      if (request.method === 'GET')
        return { status: 200, body: (await registry.listChannels()).map(shownChannel) };
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
      const body = await request.body();
      refuseSecretReferences(body, { mayReference: mayReferenceSecrets(request) });
      const channel = await allowedChannel(validate(alertChannelSchema, body));
      if (await registry.getChannel(channel.id))
        throw conflict(`alert channel '${channel.id}' already exists`, 'id');
      await registry.putChannel(channel);
      return { status: 201, body: shownChannel(channel) };
    }
    const stored = await registry.getChannel(id);
    if (!stored) throw notFound(`alert channel '${id}'`);
    if (action === 'test') {
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'POST' });
      return { status: 200, body: await sendTest(stored) };
    }
    if (action !== undefined) throw noEndpoint(request.method, path);
    if (request.method === 'GET') return { status: 200, body: shownChannel(stored) };
    if (request.method === 'PUT' || request.method === 'PATCH') {
      const body = keepMasked(await request.body(), stored);
      const next = request.method === 'PUT' ? { ...body, id } : patched(stored, body, id);
      refuseSecretReferences(next, { mayReference: mayReferenceSecrets(request), stored });
      const channel = await allowedChannel(validate(alertChannelSchema, next));
      refuseMovedSecrets(channel, { mayReference: mayReferenceSecrets(request), stored });
      await registry.putChannel(channel);
      return { status: 200, body: shownChannel(channel) };
    }
    if (request.method === 'DELETE') {
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
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT, PATCH or DELETE' });
  }

  /** A channel whose receiver the outbound address policy allows (the dispatcher checks again at connect). */
  async function allowedChannel(channel: AlertChannel): Promise<AlertChannel> {
    for (const { field, url } of outboundChannelUrls(channel)) {
      await checkOutboundUrl(url, options.outbound ?? outboundPolicy(), {
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

  async function history(request: AdminRequest, path: string): Promise<AdminResult> {
    if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
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

  async function alerts(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, collection, id, action, ...rest] = request.segments;
    if (rest.length > 0) throw noEndpoint(request.method, path);
    if (collection === 'rules' && action === undefined) return rules(request, path, id);
    if (collection === 'channels') return channels(request, path, id, action);
    if (collection === 'history' && id === undefined) return history(request, path);
    throw noEndpoint(request.method, path);
  }

  return { alerts };
}
