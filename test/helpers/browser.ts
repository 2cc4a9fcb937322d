// The admin screens in a real browser: Debian's Chromium driven by playwright-core (no browser is
// ever downloaded). Each page records what a test must see never happens: a request to another
// origin, a Content-Security-Policy violation, an uncaught error. Screenshots go to
// test-output/screenshots/, axe-core checks a screen for serious or critical accessibility faults.
import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = process.env.CASHTRACK_CHROMIUM || '/usr/bin/chromium';
const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');
const require = createRequire(import.meta.url);

/** Starts headless Chromium; a missing browser fails the test with the command that installs it (never a silent skip). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The admin screens' browser tests need Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium fonts-liberation2), as .ci/run does, or set CASHTRACK_CHROMIUM to its path.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    // What this machine's closed network needs: nothing of Chromium's own calls home.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Requests to any origin but the daemon's, refused before they leave. */
  foreign: string[];
  /** Console errors (CSP violations among them) and uncaught exceptions. */
  errors: string[];
}

/** A fresh browser context (own cookies) on `origin`, watching for foreign requests and errors. */
export async function openPage(browser: Browser, origin: string): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const watched: WatchedPage = { page, context, foreign: [], errors: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    watched.foreign.push(url);
    return route.abort();
  });
  page.on('console', (message) => {
    // The browser logs every refused API call (401 before signing in, 403 for an aged nonce) as a
    // failed resource: the screens show refusals themselves. Anything else (a CSP violation) counts.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) watched.errors.push(message.text());
  });
  page.on('pageerror', (err) => watched.errors.push(String(err)));
  return watched;
}

/** Signs in with the keyboard alone: Tab to the fields, type, Enter. */
export async function signInWithKeyboard(page: Page, origin: string, login: string, password: string): Promise<void> {
  await page.goto(`${origin}/admin/`);
  await page.getByLabel('Username or email').waitFor();
  await page.keyboard.press('Tab');
  await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('autocomplete'))).toBe('username');
  await page.keyboard.type(login);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core on the page (through the DevTools protocol, so the page's CSP stays as served); serious and critical violations. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const source = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const page = globalThis as any;
    // A modal or a notice that is still fading in has its text at part opacity, which axe measures
    // as low contrast: what is judged is the screen once it has settled, as a user reads it.
    const running = (page.document.getAnimations() as { finished: Promise<unknown> }[]).map((a) => a.finished.catch(() => null));
    await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, 5_000))]);
    const result: { violations: AxeViolation[] } = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
