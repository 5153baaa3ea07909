// What the console's browser tests share: Debian's Chromium (or GW_TEST_CHROMIUM), headless, and the folder their
// screenshots go to.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { scaled } from '@gw/testkit';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

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

/**
 * Opens a page of the console by its link in the navigation, once it shows: the link marked current and, when
 * another page was showing, its heading changed.
 */
export async function goTo(target: Page, label: string): Promise<void> {
  const link = target
    .getByRole('navigation', { name: 'Pages' })
    .getByRole('link', { name: label, exact: true });
  const heading = target.getByRole('heading', { level: 1 }).first();
  const already = (await link.getAttribute('aria-current')) === 'page';
  const before = already || (await heading.count()) === 0 ? undefined : await heading.textContent();
  await link.click();
  // A page's code may still be on its way (a chunk loaded on first use, through a loaded machine's cluster): the
  // poll's 1 s ceiling was missed once in a full run (2026-12-03), so these waits get the hooks' ceiling.
  const page = { timeout: scaled(10_000) };
  await expect.poll(() => link.getAttribute('aria-current'), page).toBe('page');
  await heading.waitFor(page);
  if (before !== undefined) await expect.poll(() => heading.textContent(), page).not.toBe(before);
}

/** Signs in on the sign-in form the page shows, with an admin or API token. */
export async function submitSignIn(target: Page, token: string): Promise<void> {
  await target.getByLabel('Admin token').fill(token);
  await target.getByRole('button', { name: 'Sign in', exact: true }).click();
  await target.getByTestId('who').waitFor();
}
