// Debian's chromium driven by playwright-core (which downloads no browser), with the flags
// this closed network needs; each page's script errors collected so a test can assert none.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.TOCK_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

// A page whose uncaught errors and console errors land in page.errors.
export async function newPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC', ...options });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  page.setDefaultTimeout(10_000);
  return page;
}

// Where screenshots go (kept as test artifacts): TOCK_WEB_ARTIFACTS, else ./artifacts.
export function artifactsDir() {
  const dir = process.env.TOCK_WEB_ARTIFACTS || join(process.cwd(), 'artifacts');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifactsDir(), `${name}.png`), fullPage: false });
}
