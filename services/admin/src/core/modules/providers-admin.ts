import type { RouterService } from '@gw/router';
import { GatewayError, invalidRequest } from '@gw/shared';
import { mayReferenceSecrets } from '../access/permissions.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';
import { testProviderKey } from './provider-key-test.ts';

/** `/api/providers[/{name}]`: provider configuration CRUD (DESIGN.md §5), and one key's test call. */
export function createProvidersAdmin(router: RouterService): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/providers',
      permission: 'providers:read',
      handle: async () => ({ status: 200, body: await router.listProviders() }),
    },
    {
      method: 'POST',
      path: '/providers',
      permission: 'providers:write',
      handle: async (request) => {
        const { name: bodyName, provider, ...config } = await request.body();
        const providerName = bodyName ?? provider;
        if (typeof providerName !== 'string' || providerName === '') {
          throw invalidRequest('name: is required (the provider name, e.g. openai)', 'name');
        }
        return {
          status: 201,
          body: await router.putProvider(providerName, config, {
            create: true,
            allowSecretReferences: mayReferenceSecrets(request),
          }),
        };
      },
    },
    route({
      method: 'GET',
      path: '/providers/:name',
      permission: 'providers:read',
      handle: async ({ params: { name } }) => ({ status: 200, body: await router.getProvider(name) }),
    }),
    // A read sent back carries the provider's name: the path names it.
    route({
      method: 'PUT',
      path: '/providers/:name',
      permission: 'providers:write',
      handle: async (request) => {
        const { name: _ignored, provider: _alsoIgnored, ...config } = await request.body();
        return {
          status: 200,
          body: await router.putProvider(request.params.name, config, {
            create: false,
            allowSecretReferences: mayReferenceSecrets(request),
          }),
        };
      },
    }),
    route({
      method: 'PATCH',
      path: '/providers/:name',
      permission: 'providers:write',
      handle: async (request) => {
        const { name: _ignored, provider: _alsoIgnored, ...patch } = await request.body();
        return {
          status: 200,
          body: await router.patchProvider(request.params.name, patch, {
            allowSecretReferences: mayReferenceSecrets(request),
          }),
        };
      },
    }),
    route({
      method: 'DELETE',
      path: '/providers/:name',
      permission: 'providers:write',
      handle: async ({ params: { name } }) => {
        await router.deleteProvider(name);
        return { status: 200, body: { deleted: name } };
      },
    }),
    // One real call on that key alone (provider-key-test.ts): it spends a token, so it is a change's permission.
    route({
      method: 'POST',
      path: '/providers/:name/keys/:key/test',
      permission: 'providers:write',
      handle: async (request) => {
        const body = await request.body().catch((error: unknown) => {
          // An empty body is no body: the key's own model is tested.
          if (error instanceof GatewayError && error.message.startsWith('request body is empty')) return {};
          throw error;
        });
        const { name, key } = request.params;
        return { status: 200, body: await testProviderKey(router, { provider: name, keyId: key, body }) };
      },
    }),
  ];
}
