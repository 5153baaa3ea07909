// Price overrides joined the stored settings: a price set through the API survives a restart until the config
// file's settings change, and settings stored by a version before prices joined are kept on upgrade (their
// hash is recognised), with the config file's `governance.pricing`.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.ts';
import { MemoryStore } from '../store/memory-store.ts';
import { parseGatewayConfig } from './gateway-config.ts';
import {
  followSystemSettings,
  LiveSettings,
  systemSettingsOf,
  writeSystemSettings,
} from './system-settings.ts';

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const resource of closing.splice(0).reverse()) await resource.close();
});

const FILE = { governance: { pricing: { 'house-model': { input: 1, output: 2 } } } };

async function start(store: MemoryStore, file: object = FILE) {
  const settings = LiveSettings.of(parseGatewayConfig(file));
  closing.push(await followSystemSettings({ store, settings, logger: silentLogger() }));
  return settings;
}

async function openStore() {
  const store = await MemoryStore.open();
  closing.push(store);
  return store;
}

describe('stored price overrides', () => {
  it('keep a price set through the API across a restart, until the config file changes', async () => {
    const store = await openStore();
    const first = await start(store);
    expect(first.pricing.current()).toEqual({ 'house-model': { input: 1, output: 2 } });
    const changed = {
      ...first.current(),
      governance: { ...first.current().governance, pricing: { 'house-model': { input: 5, output: 5 } } },
    };
    await writeSystemSettings(store, changed);

    const restarted = await start(store);
    expect(restarted.pricing.current()).toEqual({ 'house-model': { input: 5, output: 5 } });

    const edited = await start(store, {
      governance: { pricing: { 'house-model': { input: 3, output: 3 } } },
    });
    expect(edited.pricing.current()).toEqual({ 'house-model': { input: 3, output: 3 } });
  });

  it("keep settings stored by a version before prices joined, with the config file's prices", async () => {
    const store = await openStore();
    const file = systemSettingsOf(parseGatewayConfig(FILE));
    // What that version stored: no `governance.pricing`, hashed without it, and a change made through its API.
    const { client, mcp, logs, cache } = file;
    const legacy = { client, governance: { settings: file.governance.settings }, mcp, logs, cache };
    const hash = createHash('sha256').update(JSON.stringify(legacy)).digest('hex');
    await store.put('settings', 'system', {
      settings: { ...legacy, client: { ...client, max_fallbacks: 2 } },
      file_hash: hash,
    });

    const upgraded = await start(store);
    expect(upgraded.client.current().max_fallbacks).toBe(2);
    expect(upgraded.pricing.current()).toEqual({ 'house-model': { input: 1, output: 2 } });
  });
});
