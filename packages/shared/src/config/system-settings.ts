import { createHash } from 'node:crypto';
import { z } from 'zod';
import { closeOnDispose } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import { mcpRuntimeSettingsSchema } from '../schemas/mcp.ts';
import { followChanges } from '../store/follow-changes.ts';
import type { Store } from '../store/store.ts';
import { clientConfigSchema, type GatewayConfig, governanceSettingsSchema } from './gateway-config.ts';
import { logsConfigSchema } from './logs-config.ts';

/**
 * The system settings every process applies without a restart (`GET|PUT /api/config`): client settings,
 * governance settings and how MCP tool calls run. Providers, governance resources, MCP clients and the load
 * balancer have their own APIs.
 */
export const systemSettingsSchema = z.strictObject({
  client: clientConfigSchema,
  governance: z.strictObject({ settings: governanceSettingsSchema }),
  mcp: mcpRuntimeSettingsSchema,
  /** Request logs: on or off, content, its size, retention. Older stored settings without it take the file's. */
  logs: logsConfigSchema.optional(),
});

export type SystemSettings = z.infer<typeof systemSettingsSchema>;

/** Settings read once, when a process starts: a change is stored and shown, and applies at the next start. */
export const RESTART_REQUIRED = [
  'governance.settings.sweep_interval_ms',
  'governance.settings.unpriced_model_price',
  'mcp.tool_timeout_ms',
  'mcp.max_queued',
  'mcp.worker_concurrency',
  'mcp.max_concurrency_per_client',
  'mcp.connect_timeout_ms',
] as const;

const storedSettingsSchema = z.object({
  settings: systemSettingsSchema,
  /** The hash of the config file's settings these were seeded from or last compared with. */
  file_hash: z.string(),
});

const COLLECTION = 'settings';
const DOCUMENT = 'system';
const CHANNEL = 'settings';

/** A config's system settings, as a copy. */
export function systemSettingsOf(config: GatewayConfig): SystemSettings {
  const { clients: _clients, ...mcp } = config.mcp;
  return structuredClone({
    client: config.client,
    governance: { settings: config.governance.settings },
    mcp,
    logs: config.logs,
  });
}

function fileHash(settings: SystemSettings): string {
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex');
}

/**
 * Applies settings to the live config in place: every component holding `config.client`, `config.mcp` or
 * `config.governance.settings` reads the new values at its next use.
 */
export function applySystemSettings(config: GatewayConfig, settings: SystemSettings): void {
  replaceFields(config.client, settings.client);
  replaceFields(config.governance.settings, settings.governance.settings);
  replaceFields(config.mcp, settings.mcp);
  if (settings.logs) replaceFields(config.logs, settings.logs);
}

function replaceFields<Target extends object>(target: Target, values: Partial<Target>): void {
  for (const key of Object.keys(target) as Array<keyof Target>) {
    if (!(key in values) && key !== 'clients') delete target[key];
  }
  Object.assign(target, values);
}

/** The settings in force: the stored ones, else the config file's. */
export async function readSystemSettings(
  store: Pick<Store, 'get'>,
  config: GatewayConfig,
): Promise<SystemSettings> {
  const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
  if (!stored.success) return systemSettingsOf(config);
  // Settings stored before `logs` joined them: the live config's logs section.
  return { ...stored.data.settings, logs: stored.data.settings.logs ?? structuredClone(config.logs) };
}

/** Stores settings and tells every process; `fromFile` marks them as the config file's current ones. */
export async function writeSystemSettings(
  store: Pick<Store, 'get' | 'put' | 'publish'>,
  settings: SystemSettings,
  options: { fromFile?: boolean } = {},
): Promise<void> {
  const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
  const hash = options.fromFile || !stored.success ? fileHash(settings) : stored.data.file_hash;
  await store.put(COLLECTION, DOCUMENT, { settings, file_hash: hash });
  await store.publish(CHANNEL, 'system');
}

/**
 * Keeps a process's live config on the stored settings. At start the config file wins when its settings
 * changed since they were last stored (an operator edited the file); otherwise the stored ones do (a change
 * made through the API survives restarts). Afterwards every change notice, and every missed one (see
 * `followChanges`), applies the stored settings.
 */
export async function followSystemSettings(options: {
  store: Store;
  config: GatewayConfig;
  logger: Logger;
}): Promise<{ close(): Promise<void> } & AsyncDisposable> {
  const { store, config, logger } = options;
  const fromFile = systemSettingsOf(config);
  const apply = async () => {
    const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
    if (stored.success) applySystemSettings(config, stored.data.settings);
  };
  const follower = await followChanges({
    store,
    channel: CHANNEL,
    logger,
    onMessage: () => {
      apply().catch((error) => logger.warn({ err: error }, 'system settings: cannot read the stored ones'));
    },
    resync: apply,
    reseed: () => writeSystemSettings(store, fromFile, { fromFile: true }),
  });
  const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
  if (!stored.success || stored.data.file_hash !== fileHash(fromFile)) {
    await writeSystemSettings(store, fromFile, { fromFile: true });
  } else {
    applySystemSettings(config, stored.data.settings);
  }
  return closeOnDispose(follower);
}
