import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService, ManageRequest } from '@gw/governance';
import type { RouterService } from '@gw/router';
import {
  invalidRequest,
  type Logger,
  legacyKeySchema,
  methodNotAllowed,
  newRequestId,
  noEndpoint,
  parseJson,
  readBody,
  sendError,
  sendJson,
  validate,
} from '@gw/shared';
import { type AdminAuthOptions, type AdminRole, authorizeAdmin } from './admin-auth.ts';
import { createMcpAdmin, type McpAdminOptions } from './mcp-admin.ts';

export interface AdminDependencies {
  router: RouterService;
  governance: GovernanceService;
  logger: Logger;
  auth: AdminAuthOptions;
  maxBodyBytes?: number;
  /** `/api/mcp/*`: the MCP client registry in the store. */
  mcp?: McpAdminOptions;
}

export interface AdminRequest {
  method: string;
  /** Who is calling: the admin token is Admin (RBAC will add roles). */
  role: AdminRole;
  /** Path segments after /api/. */
  segments: string[];
  body: () => Promise<Record<string, unknown>>;
}

export type AdminResult = { status: number; body: unknown };

/** `/api/*`: provider configuration CRUD (DESIGN.md §5); other resources join as their services grow. */
export function createAdminApp(dependencies: AdminDependencies) {
  const { router } = dependencies;
  const maxBodyBytes = dependencies.maxBodyBytes ?? 1024 * 1024;

  async function providers(request: AdminRequest, path: string): Promise<AdminResult> {
    const name = request.segments[1];
    if (name === undefined) {
      if (request.method === 'GET') return { status: 200, body: await router.listProviders() };
      if (request.method === 'POST') {
        const { name: bodyName, provider, ...config } = await request.body();
        const providerName = bodyName ?? provider;
        if (typeof providerName !== 'string' || providerName === '') {
          throw invalidRequest('name: is required (the provider name, e.g. openai)', 'name');
        }
        return { status: 201, body: await router.putProvider(providerName, config, { create: true }) };
      }
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    }
    if (request.segments.length > 2) throw noEndpoint(request.method, path);
    if (request.method === 'GET') return { status: 200, body: await router.getProvider(name) };
    if (request.method === 'PUT') {
      const { name: _ignored, provider: _alsoIgnored, ...config } = await request.body();
      return { status: 200, body: await router.putProvider(name, config, { create: false }) };
    }
    if (request.method === 'DELETE') {
      await router.deleteProvider(name);
      return { status: 200, body: { deleted: name } };
    }
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT or DELETE' });
  }

  /**
   * `/api/governance/{collection}[/{id}[/usage|/rotate]]` for virtual-keys, customers, teams, users and
   * business-units. Create answers 201; a virtual key's value is in the create and rotate answers only.
   */
  async function governanceResources(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, collection, id, action, ...rest] = request.segments;
    if (!collection || rest.length > 0) throw noEndpoint(request.method, path);
    const manage = (manageRequest: ManageRequest) => dependencies.governance.manage(manageRequest);
    if (id === undefined) {
      if (request.method === 'GET')
        return { status: 200, body: await manage({ action: 'list', collection }) };
      if (request.method === 'POST') {
        return {
          status: 201,
          body: await manage({ action: 'create', collection, body: await request.body() }),
        };
      }
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    }
    if (action === 'usage') {
      if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
      return { status: 200, body: await manage({ action: 'usage', collection, id }) };
    }
    if (action === 'rotate') {
      if (request.method !== 'POST')
        throw methodNotAllowed({ method: request.method, path, allowed: 'POST' });
      return { status: 200, body: await manage({ action: 'rotate', collection, id }) };
    }
    if (action !== undefined) throw noEndpoint(request.method, path);
    if (request.method === 'GET')
      return { status: 200, body: await manage({ action: 'get', collection, id }) };
    if (request.method === 'PUT') {
      return {
        status: 200,
        body: await manage({ action: 'update', collection, id, body: await request.body() }),
      };
    }
    if (request.method === 'DELETE')
      return { status: 200, body: await manage({ action: 'delete', collection, id }) };
    throw methodNotAllowed({ method: request.method, path, allowed: 'GET, PUT or DELETE' });
  }

  /**
   * `/api/keys`: the migration sample of SPEC.md note 5 (`name`, `budget`, `rate_limit`, `models`), the same
   * resource as a virtual key. `models` entries `<provider>/<model>` allow that model on that provider; bare
   * entries allow the model on every configured provider; no `models` allows everything.
   */
  async function legacyKeys(request: AdminRequest, path: string): Promise<AdminResult> {
    const asVirtualKeys = {
      ...request,
      segments: ['governance', 'virtual-keys', ...request.segments.slice(1)],
    };
    if (request.segments.length > 1 || request.method === 'GET')
      return governanceResources(asVirtualKeys, path);
    if (request.method !== 'POST')
      throw methodNotAllowed({ method: request.method, path, allowed: 'GET or POST' });
    const input = validate(legacyKeySchema, await request.body());
    const providers = (await router.listProviders()).map((provider) => String(provider['name']));
    const byProvider = new Map<string, string[]>();
    for (const model of input.models ?? ['*']) {
      const slash = model.indexOf('/');
      const targets = slash > 0 ? [model.slice(0, slash)] : providers;
      const name = slash > 0 ? model.slice(slash + 1) : model;
      for (const provider of targets) byProvider.set(provider, [...(byProvider.get(provider) ?? []), name]);
    }
    const body = {
      name: input.name,
      ...(input.budget ? { budget: input.budget } : {}),
      ...(input.rate_limit ? { rate_limit: input.rate_limit } : {}),
      provider_configs: [...byProvider].map(([provider, allowed]) => ({ provider, allowed_models: allowed })),
    };
    return {
      status: 201,
      body: await dependencies.governance.manage({ action: 'create', collection: 'virtual-keys', body }),
    };
  }

  const resources: Record<string, (request: AdminRequest, path: string) => Promise<AdminResult>> = {
    providers,
    governance: governanceResources,
    keys: legacyKeys,
    mcp: createMcpAdmin(dependencies.mcp ?? {}),
  };

  /** Answers `/api/*`; false for other paths. */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path !== '/api' && !path.startsWith('/api/')) return false;
    const requestId = newRequestId();
    (async () => {
      const role = authorizeAdmin(request.headers, dependencies.auth);
      let segments: string[];
      try {
        segments = path.slice(5).split('/').filter(Boolean).map(decodeURIComponent);
      } catch {
        throw invalidRequest(`the path ${path} is not valid`);
      }
      const handler = resources[segments[0] ?? ''];
      if (!handler) throw noEndpoint(request.method, path);
      const result = await handler(
        {
          method: request.method ?? 'GET',
          role,
          segments,
          body: async () => {
            const value = parseJson(await readBody(request, maxBodyBytes));
            if (typeof value !== 'object' || value === null || Array.isArray(value)) {
              throw invalidRequest('request body must be a JSON object');
            }
            return value as Record<string, unknown>;
          },
        },
        path,
      );
      sendJson(response, result.status, result.body, { 'x-request-id': requestId });
    })().catch((error: unknown) => {
      const failure = sendError(response, error, requestId);
      if (failure.status >= 500) dependencies.logger.error({ err: error, requestId }, 'admin request failed');
    });
    return true;
  }

  return { handle };
}
