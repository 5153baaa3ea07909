import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { LoadBalancerConfig } from '../health/load-balancer-config.ts';
import { closeOnDispose } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import { mcpRuntimeSettingsSchema } from '../schemas/mcp.ts';
import { followChanges } from '../store/follow-changes.ts';
import type { Store } from '../store/store.ts';
import { cacheConfigSchema } from './cache-config.ts';
import { fieldTree, restartOnlyPaths } from './declared-fields.ts';
import { clientConfigSchema, type GatewayConfig, governanceSettingsSchema } from './gateway-config.ts';
import { type Live, LiveValue } from './live.ts';
import { logsConfigSchema } from './logs-config.ts';
import { type PriceOverrides, priceOverridesSchema } from './pricing-config.ts';

/**
 * The system settings every process applies without a restart: the live sections of the config that are
 * settings rather than resources (client settings, governance settings and price overrides, how MCP tool calls
 * run, request logs, the response cache). `GET|PUT /api/config` shows and changes them, price overrides
 * excepted (`/api/pricing`). Providers, governance resources, MCP clients, guardrails and the load balancer are
 * live too, through their own APIs.
 */
export const systemSettingsSchema = z.strictObject({
  client: clientConfigSchema,
  governance: z.strictObject({
    settings: governanceSettingsSchema,
    /** Price overrides per model. Settings stored by a version before they joined take the config file's. */
    pricing: priceOverridesSchema.optional(),
  }),
  mcp: mcpRuntimeSettingsSchema,
  /** Request logs. Settings stored by a version before they joined take the config file's. */
  logs: logsConfigSchema.optional(),
  /** The response cache. Settings stored by a version before it joined take the config file's. */
  cache: cacheConfigSchema.optional(),
});

type StoredSettings = z.infer<typeof systemSettingsSchema>;

/** The settings as stored and sent: every section present. */
export type SystemSettings = Required<Omit<StoredSettings, 'governance'>> & {
  governance: Required<StoredSettings['governance']>;
};

/**
 * Settings read once, when a process starts (their schema marks them `restartOnly`): a change is stored and
 * shown, and applies at the next start.
 */
export const RESTART_REQUIRED: readonly string[] = restartOnlyPaths(fieldTree(systemSettingsSchema));

const storedSettingsSchema = z.object({
  settings: systemSettingsSchema,
  /** The hash of the config file's settings these were seeded from or last compared with. */
  file_hash: z.string(),
});

const COLLECTION = 'settings';
const DOCUMENT = 'system';
const CHANNEL = 'settings';

/** A config's system settings. */
export function systemSettingsOf(config: GatewayConfig): SystemSettings {
  const { clients: _clients, ...mcp } = config.mcp;
  return {
    client: config.client,
    governance: { settings: config.governance.settings, pricing: config.governance.pricing },
    mcp,
    logs: config.logs,
    cache: config.cache,
  };
}

/**
 * The settings a process runs with, each section a `Live` handle: a change replaces the settings (a frozen
 * snapshot), and a component that follows a section reads `current()` at each use. Made from the config file's
 * settings; `followSystemSettings` keeps it on the stored ones.
 */
export class LiveSettings extends LiveValue<SystemSettings> {
  readonly client: Live<SystemSettings['client']> = this.select((settings) => settings.client);
  readonly governance: Live<SystemSettings['governance']['settings']> = this.select(
    (settings) => settings.governance.settings,
  );
  /** Price overrides per model (`/api/pricing`): the price catalog rebuilds its table when they change. */
  readonly pricing: Live<PriceOverrides> = this.select((settings) => settings.governance.pricing);
  readonly mcp: Live<SystemSettings['mcp']> = this.select((settings) => settings.mcp);
  readonly logs: Live<SystemSettings['logs']> = this.select((settings) => settings.logs);
  readonly cache: Live<SystemSettings['cache']> = this.select((settings) => settings.cache);
  /**
   * The config file's `load_balancer`: the seed of the load balancer's own document (`/api/load-balancer/config`),
   * replaced where the file is watched (the embedded gateway).
   */
  readonly loadBalancer: LiveValue<LoadBalancerConfig>;

  constructor(settings: SystemSettings, loadBalancer: LoadBalancerConfig) {
    super(settings);
    this.loadBalancer = new LiveValue(loadBalancer);
  }

  static of(config: GatewayConfig): LiveSettings {
    return new LiveSettings(systemSettingsOf(config), config.load_balancer);
  }
}

function fileHash(settings: SystemSettings): string {
  return createHash('sha256').update(JSON.stringify(settings)).digest('hex');
}

/**
 * The hashes versions before price overrides and `cache` joined the settings stored for the same file: their
 * settings had no `governance.pricing`, and before `cache`, four sections. Recognised at start, so an upgrade
 * keeps the changes made through the API.
 */
function legacyFileHashes(settings: SystemSettings): string[] {
  const { client, mcp, logs, cache } = settings;
  const governance = { settings: settings.governance.settings };
  return [
    { client, governance, mcp, logs, cache },
    { client, governance, mcp, logs },
  ].map((legacy) => createHash('sha256').update(JSON.stringify(legacy)).digest('hex'));
}

/** Stored settings made whole: a section a version before it did not store is the file's. */
function whole(stored: StoredSettings, file: SystemSettings): SystemSettings {
  return {
    ...stored,
    governance: { ...stored.governance, pricing: stored.governance.pricing ?? file.governance.pricing },
    logs: stored.logs ?? file.logs,
    cache: stored.cache ?? file.cache,
  };
}

/** The settings in force: the stored ones, else the config file's. */
export async function readSystemSettings(
  store: Pick<Store, 'get'>,
  file: SystemSettings,
): Promise<SystemSettings> {
  const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
  return stored.success ? whole(stored.data.settings, file) : file;
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
 * Keeps a process's live settings on the stored ones. At start the config file wins when its settings changed
 * since they were last stored (an operator edited the file); otherwise the stored ones do (a change made through
 * the API survives restarts). Afterwards every change notice, and every missed one (see `followChanges`),
 * replaces the live settings with the stored ones.
 */
export async function followSystemSettings(options: {
  store: Store;
  /** The process's settings, made from the config file (`LiveSettings.of`). */
  settings: LiveSettings;
  logger: Logger;
}): Promise<{ close(): Promise<void> } & AsyncDisposable> {
  const { store, settings, logger } = options;
  const fromFile = settings.current();
  const apply = async () => {
    const stored = storedSettingsSchema.safeParse(await store.get(COLLECTION, DOCUMENT));
    if (stored.success) settings.replace(whole(stored.data.settings, fromFile));
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
  const unchanged =
    stored.success && [fileHash(fromFile), ...legacyFileHashes(fromFile)].includes(stored.data.file_hash);
  if (!stored.success || !unchanged) {
    await writeSystemSettings(store, fromFile, { fromFile: true });
  } else {
    settings.replace(whole(stored.data.settings, fromFile));
  }
  return closeOnDispose(follower);
}
