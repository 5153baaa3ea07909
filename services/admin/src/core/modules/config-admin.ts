import {
  applySystemSettings,
  type GatewayConfig,
  invalidRequest,
  RESTART_REQUIRED,
  readSystemSettings,
  systemSettingsSchema,
  validate,
  writeSystemSettings,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { AdminRequest, AdminResult, AdminRoute } from '../http/admin-route.ts';
import { requireStore } from './require-store.ts';

export interface ConfigAdminOptions {
  /** Where the settings live (every process follows them); absent in a cluster admin without REDIS_URL. */
  store: Store | undefined;
  /** This process's live config (the config file's, with the stored settings applied). */
  config: GatewayConfig;
}

const SECTIONS = ['client', 'governance', 'mcp', 'logs'] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `GET|PUT /api/config`: the system settings (client, governance settings, how MCP tool calls run, request logs). A PUT
 * changes the fields it names; the result is validated whole (an error names the field), stored, and applied by
 * every process without a restart, except the settings listed in `restart_required`.
 */
export function createConfigAdmin(options: ConfigAdminOptions): AdminRoute[] {
  const storeOf = () => requireStore(options.store, 'the system settings');
  return [
    {
      method: 'GET',
      path: '/config',
      permission: 'config:read',
      handle: async () => ({
        status: 200,
        body: {
          ...(await readSystemSettings(storeOf(), options.config)),
          restart_required: RESTART_REQUIRED,
        },
      }),
    },
    { method: 'PUT', path: '/config', permission: 'config:write', handle: change },
  ];

  async function change(request: AdminRequest): Promise<AdminResult> {
    const store = storeOf();
    const current = await readSystemSettings(store, options.config);
    const changes = await request.body();
    for (const key of Object.keys(changes)) {
      if (!(SECTIONS as readonly string[]).includes(key)) {
        throw invalidRequest(
          `${key}: is not a system setting (/api/config changes client, governance.settings, mcp and logs; providers, keys, MCP clients and the load balancer have their own APIs)`,
          key,
        );
      }
    }
    const governance = isObject(changes['governance']) ? changes['governance'] : {};
    const merged = {
      client: { ...current.client, ...(isObject(changes['client']) ? changes['client'] : {}) },
      governance: {
        ...governance,
        settings: {
          ...current.governance.settings,
          ...(isObject(governance['settings']) ? governance['settings'] : {}),
        },
      },
      mcp: { ...current.mcp, ...(isObject(changes['mcp']) ? changes['mcp'] : {}) },
      logs: { ...current.logs, ...(isObject(changes['logs']) ? changes['logs'] : {}) },
    };
    const settings = validate(systemSettingsSchema, merged);
    await writeSystemSettings(store, settings);
    applySystemSettings(options.config, settings);
    return { status: 200, body: { ...settings, restart_required: RESTART_REQUIRED } };
  }
}
