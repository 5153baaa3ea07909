import type { ServerResponse } from 'node:http';
import { type AuthConfig, type Logger, newRequestId, parseJson, readBody, sameSecret } from '@gw/shared';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { IdentityStore } from '../access/identity-store.ts';
import type { AuditSink } from '../audit/audit-sink.ts';
import {
  invalidSyntax,
  invalidValue,
  ScimError,
  scimErrorBody,
  scimNotFound,
  toScimError,
} from './scim-errors.ts';
import type { ScimGroupStore } from './scim-groups.ts';
import { type Projection, project } from './scim-projection.ts';
import { isObject, type ScimResource } from './scim-resource.ts';
import {
  GROUP,
  type ResourceType,
  resourceTypeDocuments,
  SCHEMA,
  schemaDocuments,
  serviceProviderConfig,
  USER,
} from './scim-schema.ts';
import { type ListQuery, recordAudit, type ScimCall, ScimService } from './scim-service.ts';

/** What `/scim/v2` needs; `admin-app.ts` mounts it (docs/scim.md). */
export interface ScimRouterOptions {
  /** GW_SCIM_TOKEN: the bearer token of the provisioning client; unset, every SCIM path answers 503. */
  token: string | undefined;
  /** Absent in a cluster admin without a store (REDIS_URL): 503. */
  identities: IdentityStore | undefined;
  groups: ScimGroupStore | undefined;
  auth: Pick<AuthConfig, 'role_mappings' | 'default_role'>;
  audit?: AuditSink | undefined;
  logger: Logger;
  maxBodyBytes: number;
}

/** What the composition root hands the admin app for SCIM (the rest comes from the app itself). */
export type ScimSettings = Pick<ScimRouterOptions, 'token' | 'groups' | 'auth'>;

const CONTENT_TYPE = 'application/scim+json';
/** `count` when a list names none. */
const DEFAULT_COUNT = 100;

interface ScimLocals {
  requestId: string;
}
const localsOf = (response: Response) => response.locals['scim'] as ScimLocals;

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (body === undefined) {
    response.writeHead(status, headers);
    response.end();
    return;
  }
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': CONTENT_TYPE,
    'content-length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  response.end(payload);
}

/** The query parameters of a request, by their names in any case (RFC 7644 §3.4.2). */
function queryOf(request: Request): Map<string, string> {
  const url = request.originalUrl;
  const at = url.indexOf('?');
  const parameters = new URLSearchParams(at === -1 ? '' : url.slice(at + 1));
  return new Map([...parameters].map(([name, value]) => [name.toLowerCase(), value]));
}

function integer(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const number =
    typeof value === 'number' ? value : /^-?\d{1,9}$/.test(String(value)) ? Number(value) : Number.NaN;
  if (!Number.isInteger(number))
    throw invalidValue(`${name}: must be an integer, not '${String(value).slice(0, 40)}'`);
  return number;
}

function listQuery(values: {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
  sortBy?: unknown;
  sortOrder?: unknown;
}): ListQuery {
  const text = (value: unknown, name: string) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalidValue(`${name}: must be a string`);
    return value;
  };
  const sortOrder = text(values.sortOrder, 'sortOrder')?.toLowerCase();
  if (sortOrder !== undefined && sortOrder !== 'ascending' && sortOrder !== 'descending')
    throw invalidValue(`sortOrder: must be ascending or descending, not '${sortOrder.slice(0, 40)}'`);
  return {
    filter: text(values.filter, 'filter'),
    startIndex: integer(values.startIndex, 'startIndex', 1),
    count: integer(values.count, 'count', DEFAULT_COUNT),
    sortBy: text(values.sortBy, 'sortBy'),
    sortOrder,
  };
}

const names = (value: unknown, parameter: string): string[] | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(',');
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  throw invalidValue(`${parameter}: must be a list of attribute names`);
};

/**
 * `/scim/v2` (RFC 7644), outside `/api`: its own bearer token (GW_SCIM_TOKEN, compared in constant time; it
 * is no `/api` credential, and no `/api` credential opens SCIM), errors in SCIM's body, `application/scim+json`.
 * Refused calls are recorded in the audit log as `access_denied`.
 */
export function createScimRouter(options: ScimRouterOptions): Router {
  const service =
    options.identities && options.groups
      ? new ScimService({
          identities: options.identities,
          groups: options.groups,
          auth: options.auth,
          audit: options.audit,
          logger: options.logger,
        })
      : undefined;
  const router = Router();

  router.use((request: Request, response: Response, next: NextFunction) => {
    response.locals['scim'] = { requestId: newRequestId() } satisfies ScimLocals;
    const token = options.token;
    if (!token)
      throw new ScimError(
        503,
        'SCIM is off on this gateway: set GW_SCIM_TOKEN (the bearer token your identity provider sends) on the admin',
      );
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match || !sameSecret(match[1]!, token)) {
      const detail = match
        ? 'the bearer token is not the SCIM token (GW_SCIM_TOKEN)'
        : 'SCIM needs Authorization: Bearer <GW_SCIM_TOKEN>';
      const event = {
        actor: 'anonymous',
        action: 'access_denied',
        target: `${request.method} ${request.baseUrl}${request.path}`,
        status: 401,
        source: request.socket.remoteAddress,
        requestId: localsOf(response).requestId,
        detail,
      };
      recordAudit(options.audit, event, options.logger);
      throw new ScimError(401, detail);
    }
    if (!service)
      throw new ScimError(
        503,
        'SCIM keeps users and groups in the state store, and this admin has none (REDIS_URL)',
      );
    next();
  });

  const base = (request: Request) => {
    const forwarded = (name: string) =>
      String(request.headers[name] ?? '')
        .split(',')[0]!
        .trim();
    const protocol = forwarded('x-forwarded-proto') || 'http';
    const host = forwarded('x-forwarded-host') || request.headers.host || 'localhost';
    return `${protocol}://${host}${request.baseUrl}`;
  };
  const call = (request: Request, response: Response): ScimCall => ({
    base: base(request),
    requestId: localsOf(response).requestId,
    source: request.socket.remoteAddress,
    ifMatch: request.headers['if-match'],
  });
  const headers = (response: Response, more: Record<string, string> = {}) => ({
    'x-request-id': localsOf(response).requestId,
    ...more,
  });
  const body = async (request: Request): Promise<Record<string, unknown>> => {
    const value = parseJson(await readBody(request, options.maxBodyBytes));
    if (!isObject(value)) throw invalidSyntax('the request body must be a JSON object');
    return value;
  };
  const projectionOf = (query: Map<string, string>): Projection => ({
    attributes: names(query.get('attributes'), 'attributes'),
    excludedAttributes: names(query.get('excludedattributes'), 'excludedAttributes'),
  });
  /** A resource answer: its version as ETag, its location on create. */
  const answer = (
    response: Response,
    status: number,
    resource: ScimResource,
    type: ResourceType,
    projection: Projection,
  ) => {
    const meta = resource['meta'] as { version: string; location: string };
    send(
      response,
      status,
      project(resource, projection, type),
      headers(response, { etag: meta.version, ...(status === 201 && { location: meta.location }) }),
    );
  };

  router.get('/ServiceProviderConfig', (request: Request, response: Response) => {
    send(response, 200, serviceProviderConfig(base(request)), headers(response));
  });
  const listOf = (documents: Array<{ id: string }>) => ({
    schemas: [SCHEMA.listResponse],
    totalResults: documents.length,
    startIndex: 1,
    itemsPerPage: documents.length,
    Resources: documents,
  });
  for (const [path, documents] of [
    ['/ResourceTypes', resourceTypeDocuments],
    ['/Schemas', schemaDocuments],
  ] as const) {
    router.get(path, (request: Request, response: Response) => {
      send(response, 200, listOf(documents(base(request))), headers(response));
    });
    router.get(`${path}/:id`, (request: Request, response: Response) => {
      const id = String(request.params['id']);
      const found = documents(base(request)).find(
        (document) => document.id.toLowerCase() === id.toLowerCase(),
      );
      if (!found) throw scimNotFound(`${path.slice(1)}: no '${id.slice(0, 80)}'`);
      send(response, 200, found, headers(response));
    });
  }

  const resources = [
    {
      type: USER,
      list: (query: ListQuery, scimCall: ScimCall) => service!.listUsers(query, scimCall),
      get: (id: string, scimCall: ScimCall) => service!.getUser(id, scimCall),
      create: (input: Record<string, unknown>, scimCall: ScimCall) => service!.createUser(input, scimCall),
      replace: (id: string, input: Record<string, unknown>, scimCall: ScimCall) =>
        service!.replaceUser(id, input, scimCall),
      patch: (id: string, input: Record<string, unknown>, scimCall: ScimCall) =>
        service!.patchUser(id, input, scimCall),
      remove: (id: string, scimCall: ScimCall) => service!.deleteUser(id, scimCall),
    },
    {
      type: GROUP,
      list: (query: ListQuery, scimCall: ScimCall) => service!.listGroups(query, scimCall),
      get: (id: string, scimCall: ScimCall) => service!.getGroup(id, scimCall),
      create: (input: Record<string, unknown>, scimCall: ScimCall) => service!.createGroup(input, scimCall),
      replace: (id: string, input: Record<string, unknown>, scimCall: ScimCall) =>
        service!.replaceGroup(id, input, scimCall),
      patch: (id: string, input: Record<string, unknown>, scimCall: ScimCall) =>
        service!.patchGroup(id, input, scimCall),
      remove: (id: string, scimCall: ScimCall) => service!.deleteGroup(id, scimCall),
    },
  ];
  for (const resource of resources) {
    const { type } = resource;
    const endpoint = type.endpoint;
    const sendList = (response: Response, list: { Resources: ScimResource[] }, projection: Projection) =>
      send(
        response,
        200,
        { ...list, Resources: list.Resources.map((item) => project(item, projection, type)) },
        headers(response),
      );

    router.get(endpoint, async (request: Request, response: Response) => {
      const query = queryOf(request);
      const list = await resource.list(
        listQuery({
          filter: query.get('filter'),
          startIndex: query.get('startindex'),
          count: query.get('count'),
          sortBy: query.get('sortby'),
          sortOrder: query.get('sortorder'),
        }),
        call(request, response),
      );
      sendList(response, list, projectionOf(query));
    });
    router.post(`${endpoint}/.search`, async (request: Request, response: Response) => {
      const search = await body(request);
      const list = await resource.list(listQuery(search), call(request, response));
      sendList(response, list, {
        attributes: names(search['attributes'], 'attributes'),
        excludedAttributes: names(search['excludedAttributes'], 'excludedAttributes'),
      });
    });
    router.post(endpoint, async (request: Request, response: Response) => {
      const created = await resource.create(await body(request), call(request, response));
      answer(response, 201, created, type, projectionOf(queryOf(request)));
    });
    router.all(endpoint, () => {
      throw new ScimError(405, `${endpoint} takes GET or POST`);
    });

    const item = `${endpoint}/:id`;
    const idOf = (request: Request) => String(request.params['id']);
    router.get(item, async (request: Request, response: Response) => {
      answer(
        response,
        200,
        await resource.get(idOf(request), call(request, response)),
        type,
        projectionOf(queryOf(request)),
      );
    });
    // PUT replaces the resource, PATCH applies its operations: the same exchange around them.
    for (const [method, change] of [
      ['put', resource.replace.bind(resource)],
      ['patch', resource.patch.bind(resource)],
    ] as const) {
      router[method](item, async (request: Request, response: Response) => {
        const input = await body(request);
        answer(
          response,
          200,
          await change(idOf(request), input, call(request, response)),
          type,
          projectionOf(queryOf(request)),
        );
      });
    }
    router.delete(item, async (request: Request, response: Response) => {
      await resource.remove(idOf(request), call(request, response));
      send(response, 204, undefined, headers(response));
    });
    router.all(item, () => {
      throw new ScimError(405, `${item.replace(':id', '{id}')} takes GET, PUT, PATCH or DELETE`);
    });
  }

  router.use((request: Request) => {
    throw scimNotFound(`no SCIM endpoint ${request.method} ${request.baseUrl}${request.path}`);
  });

  router.use((thrown: unknown, _request: Request, response: Response, _next: NextFunction) => {
    const error = toScimError(thrown);
    const requestId = localsOf(response)?.requestId ?? newRequestId();
    if (error.status >= 500 && error.status !== 503)
      options.logger.error({ err: thrown, requestId }, 'scim request failed');
    if (response.headersSent) {
      response.destroy();
      return;
    }
    send(response, error.status, scimErrorBody(error), {
      'x-request-id': requestId,
      ...(error.status === 401 && { 'www-authenticate': 'Bearer realm="gw-scim"' }),
    });
  });

  return router;
}
