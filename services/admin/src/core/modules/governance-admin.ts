import type { GovernanceService, ManageRequest } from '@gw/governance';
import type { RouterService } from '@gw/router';
import { invalidRequest, legacyKeySchema, validate } from '@gw/shared';
import type { Permission } from '../access/permissions.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';
import { checkModelAlias } from './model-alias-check.ts';

/** The governance collections of `/api/governance/{collection}`, with the resource whose permissions they need. */
const COLLECTIONS = [
  { collection: 'virtual-keys', resource: 'keys' },
  { collection: 'teams', resource: 'teams' },
  { collection: 'customers', resource: 'customers' },
  { collection: 'business-units', resource: 'customers' },
  // Governance users are budget owners, not people who sign in to the admin API (those are /api/users).
  { collection: 'users', resource: 'customers' },
  { collection: 'model-aliases', resource: 'providers' },
  { collection: 'routing-rules', resource: 'routing' },
] as const;

/** Collections whose writes a team-scoped role keeps within its teams (owner-scope.ts). */
const OWNERS: ReadonlySet<string> = new Set(['teams', 'customers', 'business-units', 'users']);

/**
 * The routes of one collection at `base`. Create answers 201; a virtual key's value is in the create and rotate
 * answers only. PUT replaces a resource, PATCH merges into it (RFC 7396); DELETE of an owner that others still
 * name is a 409 unless `?cascade=true` (docs/governance.md "Updates and deletes"). Owners' usage reads need
 * `budgets:read`.
 */
function collectionRoutes(options: {
  base: string;
  collection: string;
  resource: (typeof COLLECTIONS)[number]['resource'];
  governance: GovernanceService;
  router: RouterService;
  /** The create's handler, when the collection's body is not the resource itself (`/api/keys`). */
  create?: AdminRoute['handle'] | undefined;
}): AdminRoute[] {
  const { base, collection } = options;
  const manage = async (request: ManageRequest) => {
    // A model alias must be one the router can follow (model-alias-check.ts).
    if (collection === 'model-aliases' && 'body' in request)
      await checkModelAlias(options, {
        id: 'id' in request ? request.id : undefined,
        body: request.body as Record<string, unknown>,
        patch: request.action === 'patch',
      });
    return options.governance.manage(request);
  };
  const read: Permission = `${options.resource}:read`;
  const write: Permission = `${options.resource}:write`;
  const keyed = collection === 'virtual-keys';
  const one = keyed ? 'virtual-key' : undefined;
  const change = keyed ? 'virtual-key' : OWNERS.has(collection) ? 'owner' : undefined;
  const update = (method: 'PUT' | 'PATCH', action: 'update' | 'patch') =>
    route({
      method,
      path: `${base}/:id`,
      permission: write,
      scope: change,
      handle: async (request) => ({
        status: 200,
        body: await manage({ action, collection, id: request.params.id, body: await request.body() }),
      }),
    });
  return [
    {
      method: 'GET',
      path: base,
      permission: read,
      scope: keyed ? 'virtual-key-list' : undefined,
      handle: async () => ({ status: 200, body: await manage({ action: 'list', collection }) }),
    },
    {
      method: 'POST',
      path: base,
      permission: write,
      scope: keyed ? 'virtual-key-create' : change,
      handle:
        options.create ??
        (async (request) => ({
          status: 201,
          body: await manage({ action: 'create', collection, body: await request.body() }),
        })),
    },
    route({
      method: 'GET',
      path: `${base}/:id`,
      permission: read,
      scope: one,
      handle: async ({ params: { id } }) => ({
        status: 200,
        body: await manage({ action: 'get', collection, id }),
      }),
    }),
    update('PUT', 'update'),
    update('PATCH', 'patch'),
    route({
      method: 'DELETE',
      path: `${base}/:id`,
      permission: write,
      scope: change,
      handle: async (request) => {
        const cascade = request.query?.get('cascade') ?? null;
        if (cascade !== null && cascade !== 'true' && cascade !== 'false')
          throw invalidRequest(`cascade: must be true or false, not '${cascade.slice(0, 40)}'`, 'cascade');
        return {
          status: 200,
          body: await manage({
            action: 'delete',
            collection,
            id: request.params.id,
            cascade: cascade === 'true',
          }),
        };
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id/usage`,
      permission: 'budgets:read',
      scope: one,
      handle: async ({ params: { id } }) => ({
        status: 200,
        body: await manage({ action: 'usage', collection, id }),
      }),
    }),
    route({
      method: 'POST',
      path: `${base}/:id/rotate`,
      permission: write,
      scope: one,
      handle: async ({ params: { id } }) => ({
        status: 200,
        body: await manage({ action: 'rotate', collection, id }),
      }),
    }),
  ];
}

/**
 * `/api/governance/{collection}[/{id}[/usage|/rotate]]` for virtual-keys, customers, teams, users,
 * business-units and model-aliases, and `/api/keys`: the migration sample of SPEC.md note 5 (`name`, `budget`,
 * `rate_limit`, `models`), the same resource as a virtual key. `models` entries `<provider>/<model>` allow that
 * model on that provider; bare entries allow the model on every configured provider; no `models` allows
 * everything.
 */
export function createGovernanceAdmin(options: {
  governance: GovernanceService;
  router: RouterService;
}): AdminRoute[] {
  const { governance, router } = options;
  const legacyCreate: AdminRoute['handle'] = async (request) => {
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
      provider_configs: [...byProvider].map(([provider, allowed]) => ({
        provider,
        allowed_models: allowed,
      })),
    };
    return {
      status: 201,
      body: await governance.manage({ action: 'create', collection: 'virtual-keys', body }),
    };
  };
  return [
    // Where a described request would go, and why: reads routing, changes nothing (docs/routing.md "Dry run").
    {
      method: 'POST',
      path: '/governance/routing-rules/dry-run',
      permission: 'routing:read',
      handle: async (request) => ({
        status: 200,
        body: await governance.manage({
          action: 'dry-run',
          collection: 'routing-rules',
          body: await request.body(),
        }),
      }),
    },
    ...COLLECTIONS.flatMap(({ collection, resource }) =>
      collectionRoutes({ base: `/governance/${collection}`, collection, resource, governance, router }),
    ),
    ...collectionRoutes({
      base: '/keys',
      collection: 'virtual-keys',
      resource: 'keys',
      governance,
      router,
      create: legacyCreate,
    }),
  ];
}
