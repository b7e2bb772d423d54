/** Debian's headless Chromium, started as the machine requires (no sandbox as root, no background networking). */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tempDir } from './fixtures';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));

/**
 * Runs headless Chromium with extra args and a fresh profile; stdout is the dumped DOM when asked for. Without
 * Chromium the test fails, never passes quietly: what a person looks at is checked in a browser or not at all.
 */
export function chromium(args: string[]): string {
  if (!CHROMIUM) throw new Error("no chromium at /usr/bin/chromium: install Debian's (apt-get install chromium; .ci/run does)");
  const flags = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  return spawnSync(CHROMIUM!, [...flags, `--user-data-dir=${tempDir('vero-chromium-')}`, ...args], { encoding: 'utf8', timeout: 90_000 })
    .stdout;
}

/**
 * Debian's Chromium driven by Playwright (playwright-core: no browser download; it is pointed at this binary),
 * for pages that are used, not just rendered: clicks, typing, what the page's scripts computed.
 */
export async function launchChromium(): Promise<import('playwright-core').Browser> {
  if (!CHROMIUM) throw new Error("no chromium at /usr/bin/chromium: install Debian's (apt-get install chromium; .ci/run does)");
  const { chromium: playwright } = require('playwright-core') as typeof import('playwright-core');
  return playwright.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update'],
  });
}
