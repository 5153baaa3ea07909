import {
  invalidRequest,
  type LiveSettings,
  RESTART_REQUIRED,
  readSystemSettings,
  type SettingField,
  type SystemSettings,
  settingFields,
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

/** A section with the fields a change names; a field sent as null is unset (its default, or none, applies). */
function mergeSection(current: object, changes: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current, ...changes };
  for (const [name, value] of Object.entries(changes)) if (value === null) delete merged[name];
  return merged;
}

/**
 * `GET|PUT /api/config`: the system settings (client, governance settings, how MCP tool calls run, request
 * logs, the response cache), and `GET /api/config/fields` what each one is (settings-fields.ts of @gw/shared).
 * A PUT changes the fields it names (null unsets one); the result is validated whole (an error names
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
    {
      method: 'GET',
      path: '/config/fields',
      permission: 'config:read',
      handle: async () => ({ status: 200, body: settingFields() satisfies readonly SettingField[] }),
    },
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
      client: mergeSection(current.client, sectionOf(changes, 'client')),
      governance: {
        ...governance,
        settings: mergeSection(current.governance.settings, sectionOf(governance, 'settings')),
        pricing: current.governance.pricing,
      },
      mcp: mergeSection(current.mcp, sectionOf(changes, 'mcp')),
      logs: mergeSection(current.logs, sectionOf(changes, 'logs')),
      cache: mergeSection(current.cache, sectionOf(changes, 'cache')),
    };
    const settings = validate(systemSettingsSchema, merged) as SystemSettings;
    await writeSystemSettings(store, settings);
    // This process at once; the others when the change notice reaches them.
    options.settings.replace(settings);
    return answer(settings);
  }
}
