// Clicks in the admin screens, in a real browser on a real daemon: the Clicks list (menu entry),
// the unmatched queue's best candidate for an order with its one action "Assign to <member>"
// (the assign modal, opened by keyboard, pre-filled, Escape returns focus; assigning records the
// click), and the click id on the order's page. axe finds no serious violation on any of them.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';
import { shopnetDefinition } from '../helpers/networks.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describeDaemon('the admin screens: clicks', (use, dialect) => {
  it('lists clicks, shows the best candidate of an unmatched order and assigns it to them with the click', async () => {
    const d = use();
    const { ctx } = d;
    await ctx.networks.saveCustom('clicknet', shopnetDefinition({ name: 'Click Net' }), 'test');
    const now = new Date();
    await ctx.db.execute(
      "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ('clicknet', 'boots', 'Boot Shop', '[]', '[]', 'active', 1, ?, ?)",
      [now, now],
    );
    const frank = await ctx.users.create({ login: 'frank', email: 'frank@example.com', display_name: 'Frank Clicker', role: 'member' });
    const erin = await ctx.users.create({ login: 'erin', email: 'erin@example.com', display_name: 'Erin Clicker', role: 'member' });
    const clickOf = async (member: number, url: string) => {
      const link = await ctx.advertisers.trackingLink('clicknet', 'boots', { member, url });
      return new URL(await ctx.clicks.go(link.go_token!, { ip: '203.0.113.9', userAgent: 'Browser test' })).searchParams.get('subid')!;
    };
    await clickOf(frank.id, 'https://boots.example/a');
    const erinClick = await clickOf(erin.id, 'https://boots.example/b');
    const order = await ctx.orders.record(
      { network: 'clicknet', transaction_id: 'CL-1', advertiser: 'boots', source: 'postback', sale_amount: '40.00', commission: '4.00', currency: 'EUR' },
      'postback',
    );
    expect(order.member).toBeNull();

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');

    // The Clicks list, from the menu.
    await page.getByRole('link', { name: 'Clicks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Clicks' }).waitFor();
    await page.getByText(erinClick).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Frank Clicker' }).count()).toBe(1);
    await screenshot(page, `clicks-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // The unmatched queue: the best candidate is Erin, the last to click before the sale.
    await page.goto(`${d.url}/admin/orders?unmatched=true`);
    const row = page.getByRole('row').filter({ hasText: 'CL-1' });
    const assign = row.getByRole('button', { name: 'Assign to Erin Clicker' });
    await assign.waitFor();
    await screenshot(page, `orders-candidate-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    // By keyboard: Enter opens the assign modal with Erin in it; Escape closes it and focus returns.
    await assign.focus();
    await page.keyboard.press('Enter');
    const modal = page.getByRole('dialog', { name: `Assign order #${order.id}` });
    await modal.waitFor();
    expect(await modal.getByRole('combobox', { name: 'Member' }).inputValue()).toContain('Erin Clicker');
    expect(await modal.textContent()).toContain(erinClick);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'detached' });
    await expect.poll(() => assign.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await modal.getByRole('button', { name: 'Assign' }).click();
    await page.locator('.components-notice').getByText(`Order #${order.id} is now Erin Clicker's.`).waitFor();
    const after = await d.api('GET', `/orders/${order.id}`);
    expect(after.body).toMatchObject({ member: { id: erin.id }, click_id: erinClick });

    // The order's page shows the click.
    await page.goto(`${d.url}/admin/orders/${order.id}`);
    await page.getByRole('heading', { level: 1, name: `Order #${order.id}` }).waitFor();
    await page.getByText(erinClick).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
