// A list screen in a real browser: the views row counts what the database holds, sorting and
// filtering change the URL (so a link reproduces the view) and the rows, and a copied link opens
// the same view.
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

describeDaemon('the admin screens: a list', (use, dialect) => {
  it('shows orders with their status counts, sorts and filters through the URL, and opens a copied link as it was', async () => {
    const d = use();
    const member = await d.ctx.users.create({ login: 'bob', email: 'bob@example.com', role: 'member' });
    for (let i = 1; i <= 5; i++) {
      await d.ctx.orders.record(
        {
          network: 'awin',
          transaction_id: `T-${i}`,
          source: 'postback',
          sale_amount: `${i}00.00`,
          commission: `${i}.00`,
          member_id: member.id,
          status: i <= 3 ? 'pending' : 'approved',
        },
        'system',
      );
    }
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Orders' }).click();
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('All (5)');
    expect(await views.textContent()).toContain('Pending (3)');
    await views.getByRole('link', { name: /Approved/ }).click();
    await expect.poll(() => page.url()).toContain('status=approved');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'T-' }).count()).toBe(2);
    await screenshot(page, `orders-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    // The link opens the same view in a new page.
    const copied = page.url();
    const other = await context.newPage();
    await other.goto(copied);
    await expect.poll(() => other.getByRole('row').filter({ hasText: 'T-' }).count()).toBe(2);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
