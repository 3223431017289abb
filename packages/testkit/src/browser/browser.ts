/**
 * A real headless browser for page tests: Debian's Chromium (`apt-get install chromium`),
 * driven by playwright-core. Playwright's own browser downloads need a CDN this machine cannot
 * reach, so the system binary is used (`CHROMIUM_PATH` overrides /usr/bin/chromium).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export type { Browser, Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Chromium's background services (updates, sync, safe browsing) open connections that a closed
 * network refuses, many at a time: turned off so that a page test sees only its own traffic.
 */
const QUIET_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium; fails with the install command when it is missing. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  // Loaded here, not at the top: every test and benchmark imports @pmm/testkit, few launch a
  // browser, and playwright-core costs about 0.7 s and 30 MB of heap to load (measured).
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: QUIET_FLAGS });
}
