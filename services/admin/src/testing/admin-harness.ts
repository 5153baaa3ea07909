// A test harness of the admin app over stub services and a memory store: tokens of every role, served on a
// loopback port (route-table.test.ts, admin-access.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GovernanceService } from '@gw/governance';
import type { RouterService } from '@gw/router';
import {
  LiveSettings,
  type Logger,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { IdentityStore } from '../core/access/identity-store.ts';
import { createAdminApp } from '../core/admin-app.ts';
import type { AdminRequest, AdminResult, AdminRoute } from '../core/http/admin-route.ts';
import { createRouteTable } from '../core/http/route-table.ts';

export const BOOTSTRAP_TOKEN = 'bootstrap-admin-token';

/** Virtual keys the governance stub knows: `key-a` of team-a, `key-b` of team-b. */
const KEYS = [
  { id: 'key-a', name: 'a', team_id: 'team-a', value: 'sk-gw-aaaaaaaaaaaaaaaaaaaaaaaa' },
  { id: 'key-b', name: 'b', team_id: 'team-b', value: 'sk-gw-bbbbbbbbbbbbbbbbbbbbbbbb' },
];

const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;

function governanceStub(): GovernanceService {
  return {
    manage: async (request: { action: string; id?: string; body?: Record<string, unknown> }) => {
      if (request.action === 'list') return KEYS;
      if (request.action === 'get') {
        const key = [...KEYS, { id: 'team-a' }, { id: 'team-b' }].find(
          (candidate) => candidate.id === request.id,
        );
        if (key) return key;
        const { notFound } = await import('@gw/shared');
        throw notFound(`virtual key ${request.id}`);
      }
      return { id: 'new', ...(request.body ?? {}) };
    },
  } as unknown as GovernanceService;
}

function routerStub(): RouterService {
  return {
    listProviders: async () => [{ name: 'openai', keys: [{ id: 'k', value: 'sk-****1234' }] }],
    getProvider: async (name: string) => ({ name, keys: [{ id: 'k', value: 'sk-****1234' }] }),
    putProvider: async (name: string) => ({ name }),
    patchProvider: async (name: string) => ({ name }),
    deleteProvider: async () => undefined,
    health: async () => [],
    complete: async () => ({ provider: 'openai', response: { model: 'gpt-4o-mini' } }),
  } as unknown as RouterService;
}

export async function startAdminHarness(options: { allowAnonymous?: boolean } = {}) {
  const store = await MemoryStore.open();
  const identities = new IdentityStore({ store, logger: silent });
  const settings = LiveSettings.of(parseGatewayConfig({}));
  const app = createAdminApp({
    router: routerStub(),
    governance: governanceStub(),
    logger: silent,
    auth: { adminToken: BOOTSTRAP_TOKEN, allowAnonymous: options.allowAnonymous ?? false },
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
    loadBalancer: { store, seed: settings.loadBalancer },
    systemConfig: { store, settings },
    identities,
  });
  const server: Server = createServer((request, response) => {
    if (!app.handle(request, response)) {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  await identities.putUser({
    id: 'dev',
    email: 'dev@example.com',
    name: 'Dev',
    roles: ['developer'],
    team_ids: ['team-a'],
    active: true,
    created_at: '',
    updated_at: '',
  });
  await identities.putRole({
    id: 'auditor',
    name: 'Auditor',
    description: '',
    permissions: ['config:read', 'providers:read', 'tokens:read'],
    team_scoped: false,
    built_in: false,
  });
  const token = async (role: string, userId?: string) =>
    (
      await identities.createToken({
        name: role,
        role,
        created_by: 'test',
        ...(userId !== undefined && { user_id: userId }),
      })
    ).value;
  const tokens = {
    admin: await token('admin'),
    developer: await token('developer', 'dev'),
    viewer: await token('viewer'),
    auditor: await token('auditor'),
  };
  return {
    url,
    app,
    identities,
    tokens,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

/** A JSON call with an optional bearer; answers the status and the parsed body. */
export async function adminCall(
  url: string,
  method: string,
  options: { token?: string | undefined; body?: unknown } = {},
) {
  const response = await fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
  const body: any = text ? JSON.parse(text) : undefined;
  return { status: response.status, body };
}

/**
 * Calls rows as the admin app does, without HTTP or a permission check: the row of the method and path (`/api/…`),
 * or the 404 or 405 the table answers. For handlers' unit tests.
 */
export function routeCaller(routes: readonly AdminRoute[]) {
  const table = createRouteTable(routes);
  return (
    method: string,
    path: string,
    request: Partial<Pick<AdminRequest, 'role' | 'principal' | 'query'>> & { body?: unknown } = {},
  ): Promise<AdminResult> => {
    const segments = path.slice('/api/'.length).split('/').filter(Boolean).map(decodeURIComponent);
    const found = table.match(method, segments);
    if (!found) return Promise.reject(table.refusal(method, path, segments).error);
    return found.route.handle({
      method,
      role: request.role ?? 'admin',
      principal: request.principal,
      segments,
      params: found.params,
      path,
      query: request.query ?? new URLSearchParams(),
      body: async () => (request.body ?? {}) as Record<string, unknown>,
    });
  };
}
