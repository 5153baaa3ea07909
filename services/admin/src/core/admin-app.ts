import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouterService } from '@gw/router';
import {
  GatewayError,
  invalidRequest,
  type Logger,
  newRequestId,
  parseJson,
  readBody,
  sendError,
  sendJson,
} from '@gw/shared';
import { type AdminAuthOptions, authorizeAdmin } from './admin-auth.ts';

export interface AdminDependencies {
  router: RouterService;
  logger: Logger;
  auth: AdminAuthOptions;
  maxBodyBytes?: number;
}

interface AdminRequest {
  method: string;
  /** Path segments after /api/. */
  segments: string[];
  body: () => Promise<Record<string, unknown>>;
}

type AdminResult = { status: number; body: unknown };

function notFound(path: string): GatewayError {
  return new GatewayError({ type: 'not_found', status: 404, message: `no admin endpoint at ${path}` });
}

function methodNotAllowed(method: string, path: string, allowed: string): GatewayError {
  return new GatewayError({
    type: 'method_not_allowed',
    status: 405,
    message: `${method} is not allowed on ${path}; use ${allowed}`,
  });
}

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
      throw methodNotAllowed(request.method, path, 'GET or POST');
    }
    if (request.segments.length > 2) throw notFound(path);
    if (request.method === 'GET') return { status: 200, body: await router.getProvider(name) };
    if (request.method === 'PUT') {
      const { name: _ignored, provider: _alsoIgnored, ...config } = await request.body();
      return { status: 200, body: await router.putProvider(name, config, { create: false }) };
    }
    if (request.method === 'DELETE') {
      await router.deleteProvider(name);
      return { status: 200, body: { deleted: name } };
    }
    throw methodNotAllowed(request.method, path, 'GET, PUT or DELETE');
  }

  const resources: Record<string, (request: AdminRequest, path: string) => Promise<AdminResult>> = {
    providers,
  };

  /** Answers `/api/*`; false for other paths. */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path !== '/api' && !path.startsWith('/api/')) return false;
    const requestId = newRequestId();
    (async () => {
      authorizeAdmin(request.headers, dependencies.auth);
      let segments: string[];
      try {
        segments = path.slice(5).split('/').filter(Boolean).map(decodeURIComponent);
      } catch {
        throw invalidRequest(`the path ${path} is not valid`);
      }
      const handler = resources[segments[0] ?? ''];
      if (!handler) throw notFound(path);
      const result = await handler(
        {
          method: request.method ?? 'GET',
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

export type AdminApp = ReturnType<typeof createAdminApp>;
