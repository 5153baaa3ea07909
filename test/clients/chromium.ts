// What the console's browser tests share: Debian's Chromium (or GW_TEST_CHROMIUM), headless, and the folder their
// screenshots go to.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = process.env.GW_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'ui');

/** Headless Chromium, with the screenshots' folder made; a clear failure when the browser is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y --no-install-recommends chromium, as .ci/run does) or set GW_TEST_CHROMIUM`,
    );
  }
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}
