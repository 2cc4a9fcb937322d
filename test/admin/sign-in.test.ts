// The admin screens' front door in a real browser, on a real daemon: sign in with the keyboard
// alone, see the overview of what the database holds, keep working when the nonce ages out, sign
// out and see the old cookie refused. No request leaves for another origin, no CSP violation, no
// serious accessibility fault.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describeDaemon('the admin screens: signing in and out', (use, dialect) => {
  it('signs in with the keyboard alone and shows the overview of what the database holds', async () => {
    const d = use();
    const member = await d.ctx.users.create({ login: 'ann', email: 'ann@example.com', role: 'member', password: 'member password 1' });
    await d.ctx.ledger.adjust({ member_id: member.id, type: 'credit', amount: '27.50', currency: 'EUR', note: 'Welcome bonus' }, 'test');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    // A wrong password first: the API's refusal, in words.
    await page.goto(`${d.url}/admin/`);
    await page.getByLabel('Username or email').fill('e2e-admin');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByLabel('Password').press('Enter');
    await expect
      .poll(() => page.getByRole('alert').or(page.locator('.components-notice.is-error')).first().textContent())
      .toMatch(/password|incorrect|invalid/i);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    const owed = page.locator('.ct-cards').getByRole('row', { name: /EUR/ });
    await expect.poll(() => owed.textContent()).toContain('27.50');
    await screenshot(page, `overview-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('refreshes an expired nonce without the user noticing, and signs out for good', async () => {
    const d = use();
    const { page, context, errors } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    // Every later API call carries a nonce the server refuses: api-fetch must fetch /rest-nonce and retry.
    let refused = 0;
    await context.route('**/wp-json/svc/v1/**', async (route) => {
      const headers = route.request().headers();
      if (refused === 0) {
        refused++;
        return route.continue({ headers: { ...headers, 'x-wp-nonce': 'aged0nonce' } });
      }
      return route.continue();
    });
    await page.getByLabel('Period').selectOption('7');
    await page.getByRole('heading', { name: 'Orders recorded in the last 7 days' }).waitFor();
    expect(refused).toBe(1);
    await expect.poll(() => page.locator('.components-notice.is-error').count()).toBe(0);
    const cookies = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username or email').waitFor();
    // The old cookie is revoked on the server, not only forgotten by the browser.
    const session = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const res = await fetch(`${d.url}/rest-nonce`, { headers: { cookie: session } });
    expect(res.status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });
});
