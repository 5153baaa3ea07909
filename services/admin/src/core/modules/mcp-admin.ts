import { type McpClientView, type McpRegistry, mcpClientNotFound } from '@gw/mcp-runner/control';
import {
  checkDestinations,
  fieldTree,
  GatewayError,
  invalidRequest,
  type McpClientConfig,
  maskSecrets,
  mcpClientConfigSchema,
  mcpClientEditSchema,
  type OutboundPolicy,
  refuseSecretReferences,
  type SecretReferenceRule,
  validate,
} from '@gw/shared';
import type { McpClient, McpClientChange } from '../../api-types.ts';
import { mayReferenceSecrets } from '../access/permissions.ts';
import type { AdminRequest, AdminResult } from '../http/admin-route.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';
import { isUnderPrefix } from './mcp-remote-urls.ts';

export interface McpAdminOptions {
  /** Absent when this admin has no MCP store (every call answers 400 mcp_not_configured). */
  registry?: McpRegistry | undefined;
  /** How long add and reconnect wait for a runner to report the new connection; 5 s by default. */
  reportWaitMs?: number;
  /** The config file's outbound address policy (docs/network.md). */
  outbound: OutboundPolicy;
  /** The config file's `network.mcp_remote_urls`: http/sse servers `mcp:write` alone may add. */
  remoteUrls?: readonly string[] | undefined;
  /** Which references Admin may name in a client (a stdio client's `env`): `admin.secret_references`. */
  secretReferences: SecretReferenceRule;
}

/**
 * An http or sse client makes every runner send requests to its URL: a holder of `mcp:remote` (Admin) may add
 * one anywhere the outbound address policy allows; a holder of `mcp:write` alone only under a prefix the config
 * file lists. The address policy applies to both, here for a plain answer and on the runners at every connection.
 */
async function assertRemoteAllowed(
  config: McpClientConfig,
  request: AdminRequest,
  options: McpAdminOptions,
): Promise<void> {
  const url = config.connection_string!;
  const mayAddAny = request.principal
    ? request.principal.permissions.has('mcp:remote')
    : request.role === 'admin';
  const listed = (options.remoteUrls ?? []).some((prefix) => isUnderPrefix(url, prefix));
  if (!mayAddAny && !listed) {
    throw new GatewayError({
      type: 'forbidden',
      message: `adding an ${config.connection_type} MCP client needs the permission mcp:remote (Admin), unless the config file lists its URL in network.mcp_remote_urls`,
      code: 'missing_permission',
    });
  }
  await checkDestinations(mcpClientConfigSchema, config, options.outbound);
}

/** A client as answers show it: its URL without the credentials it carries. */
function shown(view: McpClientView): McpClient {
  const { definitions: _definitions, ...client } = view;
  return { ...client, config: maskSecrets(fieldTree(mcpClientConfigSchema), client.config) };
}

/**
 * `/api/mcp/*` (docs/mcp.md "Admin API"). Admin never connects to MCP servers: it writes configs into the
 * store, runners connect and report, and admin reads their reports.
 *
 * - `GET /api/mcp/clients` → 200 array of MCPClient
 * - `GET /api/mcp/client/{name}` → 200 MCPClient
 * - `POST /api/mcp/client` → 200 `{status: 'success', message, client}` once a runner reported (or after
 *   the wait); 409 when the name exists; 403 for a stdio client unless the caller is Admin, for an http or sse
 *   client without `mcp:remote` unless its URL is allow-listed; 400 for a URL the outbound address policy refuses
 * - `PUT|PATCH /api/mcp/client/{name}` → 200 `{status: 'success', message, client}`: SPEC.md's PUT edits the
 *   filter fields only and keeps what it does not name, so it already is a merge; PATCH is the same edit
 * - `DELETE /api/mcp/client/{name}` → 200 `{status: 'success', deleted: name}`; runners disconnect it
 * - `POST /api/mcp/client/{name}/reconnect` → 200 `{status: 'success', message, client}`
 */
export function createMcpAdmin(options: McpAdminOptions): AdminRoute[] {
  const reportWaitMs = options.reportWaitMs ?? 5_000;

  /** Polls until a runner reported on the client after `since` with a settled state, or the wait ends. */
  async function settled(registry: McpRegistry, name: string, since: number): Promise<McpClientView> {
    const deadline = Date.now() + reportWaitMs;
    while (true) {
      const reported = (await registry.listStatuses()).some(
        (status) => status.client === name && status.updated_at >= since && status.state !== 'connecting',
      );
      if (reported || Date.now() >= deadline) return registry.view(name);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function add(registry: McpRegistry, request: AdminRequest): Promise<AdminResult> {
    const body = await request.body();
    refuseSecretReferences(mcpClientConfigSchema, body, {
      mayReference: mayReferenceSecrets(request),
      references: options.secretReferences,
    });
    const config = validate(mcpClientConfigSchema, body);
    if (config.connection_type === 'stdio' && request.role !== 'admin') {
      throw new GatewayError({
        type: 'forbidden',
        message:
          'only Admin may add stdio MCP clients (they run a command on the runners): send the admin token',
      });
    }
    if (config.connection_type !== 'stdio') await assertRemoteAllowed(config, request, options);
    if (await registry.getConfig(config.name)) {
      throw new GatewayError({
        type: 'conflict',
        message: `MCP client '${config.name}' already exists`,
        param: 'name',
      });
    }
    const since = Date.now();
    await registry.putConfig(config);
    const client = await settled(registry, config.name, since);
    return {
      status: 200,
      body: {
        status: 'success',
        message: `MCP client '${config.name}' added`,
        client: shown(client),
      } satisfies McpClientChange,
    };
  }

  async function edit(registry: McpRegistry, name: string, request: AdminRequest): Promise<AdminResult> {
    const existing = await registry.getConfig(name);
    if (!existing) throw mcpClientNotFound(name);
    const changes = validate(mcpClientEditSchema, await request.body());
    if (changes.name !== undefined && changes.name !== name) {
      throw invalidRequest('name: a client cannot be renamed; delete it and add it again', 'name');
    }
    const updated: McpClientConfig = { ...existing };
    for (const field of ['tools_to_execute', 'tools_to_skip', 'tools_to_auto_execute'] as const) {
      const value = changes[field];
      if (value === null) delete updated[field];
      else if (value !== undefined) updated[field] = value;
    }
    if (changes.allow_by_default !== undefined) updated.allow_by_default = changes.allow_by_default;
    await registry.putConfig(updated);
    return {
      status: 200,
      body: {
        status: 'success',
        message: `MCP client '${name}' updated`,
        client: shown(await registry.view(name)),
      } satisfies McpClientChange,
    };
  }

  function registryOf(): McpRegistry {
    if (options.registry) return options.registry;
    throw new GatewayError({
      type: 'mcp_not_configured',
      message: 'MCP is not available on this admin',
    });
  }

  const editRow = (method: 'PUT' | 'PATCH') =>
    route({
      method,
      path: '/mcp/client/:name',
      permission: 'mcp:write',
      handle: async (request) => edit(registryOf(), request.params.name, request),
    });

  return [
    {
      method: 'GET',
      path: '/mcp/clients',
      permission: 'mcp:read',
      handle: async () => ({ status: 200, body: (await registryOf().views()).map(shown) }),
    },
    {
      method: 'POST',
      path: '/mcp/client',
      permission: 'mcp:write',
      handle: async (request) => add(registryOf(), request),
    },
    route({
      method: 'GET',
      path: '/mcp/client/:name',
      permission: 'mcp:read',
      handle: async (request) => ({ status: 200, body: shown(await registryOf().view(request.params.name)) }),
    }),
    editRow('PUT'),
    editRow('PATCH'),
    route({
      method: 'DELETE',
      path: '/mcp/client/:name',
      permission: 'mcp:write',
      handle: async (request) => {
        const { name } = request.params;
        if (!(await registryOf().deleteConfig(name))) throw mcpClientNotFound(name);
        return { status: 200, body: { status: 'success', deleted: name } };
      },
    }),
    route({
      method: 'POST',
      path: '/mcp/client/:name/reconnect',
      permission: 'mcp:write',
      handle: async (request) => {
        const registry = registryOf();
        const { name } = request.params;
        if (!(await registry.getConfig(name))) throw mcpClientNotFound(name);
        const since = Date.now();
        await registry.requestReconnect(name);
        const client = await settled(registry, name, since);
        return {
          status: 200,
          body: {
            status: 'success',
            message: `MCP client '${name}' reconnected`,
            client: shown(client),
          } satisfies McpClientChange,
        };
      },
    }),
  ];
}
