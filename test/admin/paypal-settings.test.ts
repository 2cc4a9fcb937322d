// The PayPal Payouts panel of the Settings screen in a real browser, on a real daemon: the account
// stored through the screen, the client secret never shown, and a batch then sent with what the
// screen stored to the local PayPal fixture. No foreign request, no console error, no serious
// accessibility fault.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPayPalFixture, type PayPalFixture } from '../fixtures/paypal.js';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';

const PASSWORD = 'correct horse battery';
const SECRET = 'EGnHDxD-screen-secret-0042';

let browser: Browser;
let fixture: PayPalFixture;
beforeAll(async () => {
  browser = await launchBrowser();
  fixture = await startPayPalFixture({ clientSecret: SECRET });
});
afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

function notice(page: Page, text: string | RegExp) {
  return page.locator('.components-notice').getByText(text);
}

async function violations(page: Page): Promise<string[]> {
  await page.waitForFunction(() => (globalThis as any).document.getAnimations().every((a: any) => a.playState !== 'running'));
  return seriousViolations(page);
}

describeDaemon(
  'the admin Settings screen: PayPal Payouts',
  (use, dialect) => {
    it('stores the PayPal account with a write-only client secret, and batches are then sent with it', async () => {
      const d = use();
      const { page, foreign, errors, context } = await openPage(browser, d.url);
      await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
      await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Settings', exact: true }).click();
      const panel = page.getByRole('form', { name: 'PayPal Payouts' });
      await panel.getByText('Not configured yet: set client_id, client_secret.').waitFor();
      expect(await violations(page)).toEqual([]);

      await panel.getByLabel('PayPal client ID').fill(fixture.clientId);
      await panel.getByLabel('PayPal API base URL override').fill(fixture.url);
      await panel.getByRole('button', { name: 'Set a client secret' }).click();
      await panel.getByLabel('New PayPal client secret').fill(SECRET);
      await panel.getByRole('button', { name: 'Save PayPal settings' }).click();
      await notice(page, 'PayPal settings saved.').waitFor();
      await panel.getByText(`Batches are sent to ${fixture.url}.`).waitFor();
      expect(await panel.getByText('Client secret:').textContent()).toContain('set');
      await screenshot(page, `settings-paypal-${dialect}`);
      expect(await page.content()).not.toContain(SECRET);

      const view = await d.api('GET', '/payouts/paypal/settings');
      expect(view.body).toMatchObject({ configured: true, client_id: fixture.clientId, base_url: fixture.url, client_secret_set: true });
      expect(JSON.stringify(view.body)).not.toContain(SECRET);
      const client = await d.ctx.paypal.client();
      const created = await client.createBatch(`screen-${dialect}`, [
        { sender_item_id: 'screen-1', receiver: `screen-${dialect}@example.com`, amount: { value: '3.00', currency: 'USD' } },
      ]);
      expect(fixture.batches.has(created.payout_batch_id)).toBe(true);
      expect(fixture.paid.get(`screen-${dialect}@example.com`)).toBe(1);

      // A move to live without the secret again is refused with the service's message.
      await panel.getByLabel('PayPal API base URL override').fill('');
      await panel.getByLabel('PayPal environment').selectOption('live');
      await panel.getByRole('button', { name: 'Save PayPal settings' }).click();
      await panel
        .locator('.components-notice')
        .getByText(/client_secret/)
        .waitFor();
      expect((await d.api('GET', '/payouts/paypal/settings')).body).toMatchObject({ environment: 'sandbox', base_url: fixture.url });
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
  },
  { 'outbound.allow': ['127.0.0.1:*'] },
);
