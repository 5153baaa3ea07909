import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { closeOnDispose } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import { type GatewayConfig, loadGatewayConfig } from './gateway-config.ts';

/** Editors write a file in bursts (truncate, write, rename): one reload per burst. */
const SETTLE_MS = 150;

/**
 * Watches the config file (its folder, so a file replaced by rename is still seen) and hands over each valid
 * new version; a version that does not validate is logged with the field it names and changes nothing.
 */
export function watchConfigFile(options: {
  path: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  onChange: (config: GatewayConfig) => Promise<void>;
}): { close(): void } & AsyncDisposable {
  const { path, logger } = options;
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    loadGatewayConfig(path, options.env)
      .then(async (config) => {
        await options.onChange(config);
        logger.info({ path }, 'config file changed: system settings reloaded');
      })
      .catch((error: Error) => logger.warn({ path }, `config file change not applied: ${error.message}`));
  };
  const watcher = watch(dirname(path), (_event, file) => {
    if (file !== null && file !== name) return;
    clearTimeout(timer);
    timer = setTimeout(reload, SETTLE_MS);
  });
  watcher.on('error', (error) => logger.warn({ err: error, path }, 'config file watch failed'));
  return closeOnDispose({
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  });
}
