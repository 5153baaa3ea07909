import {
  invalidRequest,
  type LiveSettings,
  RESTART_REQUIRED,
  readSystemSettings,
  type SystemSettings,
  systemSettingsSchema,
  validate,
  writeSystemSettings,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { SystemSettingsView } from '../../api-types.ts';
import type { AdminRequest, AdminResult, AdminRoute } from '../http/admin-route.ts';
import { requireStore } from './require-store.ts';

export interface ConfigAdminOptions {
  /** Where the settings live (every process follows them); absent in a cluster admin without REDIS_URL. */
  store: Store | undefined;
  /** This process's live settings (the config file's, kept on the stored ones). */
  settings: LiveSettings;
}

/** The sections a PUT may name; `governance` only through its `settings`. */
const SECTIONS = ['client', 'governance', 'mcp', 'logs', 'cache'] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const sectionOf = (changes: Record<string, unknown>, name: string) =>
  isObject(changes[name]) ? changes[name] : {};

/**
 * `GET|PUT /api/config`: the system settings (client, governance settings, how MCP tool calls run, request
 * logs, the response cache). A PUT changes the fields it names; the result is validated whole (an error names
 * the field), stored, and applied by every process to its next request, except the settings listed in
 * `restart_required` (their schema marks them read at start).
 */
export function createConfigAdmin(options: ConfigAdminOptions): AdminRoute[] {
  const storeOf = () => requireStore(options.store, 'the system settings');
  // Price overrides are `/api/pricing`'s: not shown here, so a settings document sent back whole keeps them.
  const answer = ({ governance, ...settings }: SystemSettings): AdminResult => ({
    status: 200,
    body: {
      ...settings,
      governance: { settings: governance.settings },
      restart_required: RESTART_REQUIRED,
    } satisfies SystemSettingsView,
  });
  return [
    {
      method: 'GET',
      path: '/config',
      permission: 'config:read',
      handle: async () => answer(await readSystemSettings(storeOf(), options.settings.current())),
    },
    { method: 'PUT', path: '/config', permission: 'config:write', handle: change },
  ];

  async function change(request: AdminRequest): Promise<AdminResult> {
    const store = storeOf();
    const current = await readSystemSettings(store, options.settings.current());
    const changes = await request.body();
    for (const key of Object.keys(changes)) {
      if (!(SECTIONS as readonly string[]).includes(key)) {
        throw invalidRequest(
          `${key}: is not a system setting (/api/config changes client, governance.settings, mcp, logs and cache; providers, keys, MCP clients, guardrails and the load balancer have their own APIs)`,
          key,
        );
      }
    }
    const governance = sectionOf(changes, 'governance');
    if ('pricing' in governance) {
      throw invalidRequest(
        'governance.pricing: prices have their own API (/api/pricing/models/{model})',
        'governance.pricing',
      );
    }
    const merged = {
      client: { ...current.client, ...sectionOf(changes, 'client') },
      governance: {
        ...governance,
        settings: { ...current.governance.settings, ...sectionOf(governance, 'settings') },
        pricing: current.governance.pricing,
      },
      mcp: { ...current.mcp, ...sectionOf(changes, 'mcp') },
      logs: { ...current.logs, ...sectionOf(changes, 'logs') },
      cache: { ...current.cache, ...sectionOf(changes, 'cache') },
    };
    const settings = validate(systemSettingsSchema, merged) as SystemSettings;
    await writeSystemSettings(store, settings);
    // This process at once; the others when the change notice reaches them.
    options.settings.replace(settings);
    return answer(settings);
  }
}
