// Members and ledger in a real browser: the members list (and the overview's link to it by
// currency), the lookup to find a member, a credit from the member's page whose double-clicked
// button posts once, the reversal of that credit, and the refusal to reverse a payout's entry
// shown in the API's words.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { type Daemon, describeDaemon } from '../helpers/daemon.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Bob's EUR balance and how many entries he has, as the API says. */
async function ledgerOf(d: Daemon, memberId: number): Promise<{ available: string; entries: string }> {
  const balances = await d.api('GET', `/ledger/members?member_id=${memberId}&currency=EUR`);
  const entries = await d.api('GET', `/ledger/entries?member_id=${memberId}`);
  return { available: balances.body[0]?.available, entries: String(entries.headers['x-wp-total']) };
}

const timeline = (page: Page) => page.locator('.dataviews-view-activity__item');

describeDaemon('the admin screens: members and ledger', (use, dialect) => {
  it('finds a member, credits them once on a double click, reverses it, and shows why a payout entry cannot be reversed', async () => {
    const d = use();
    const bob = await d.ctx.users.create({ login: 'bob', email: 'bob@example.com', display_name: 'Bob Builder', role: 'member' });
    const carol = await d.ctx.users.create({ login: 'carol', email: 'carol@example.com', display_name: 'Carol Jones', role: 'member' });
    await d.ctx.ledger.adjust({ member_id: bob.id, type: 'credit', amount: '5.00', currency: 'EUR', note: 'Welcome bonus' }, 'test');
    await d.ctx.ledger.adjust({ member_id: carol.id, type: 'credit', amount: '7.00', currency: 'USD', note: 'Welcome bonus' }, 'test');
    const payout = await d.api('POST', '/payouts', { member_id: bob.id, amount: '2.00', currency: 'EUR', method: 'paypal' });
    expect(payout.status).toBe(201);
    expect(await ledgerOf(d, bob.id)).toEqual({ available: '3.00', entries: '2' });

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
    const rows = page.getByRole('row').filter({ has: page.getByRole('link') });
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('Carol Jones');
    await screenshot(page, `members-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // The overview's link: one currency.
    await page.goto(`${d.url}/admin/members?currency=EUR`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Bob Builder');

    // The lookup finds a member by a prefix of the login and opens their page.
    const find = page.getByRole('combobox', { name: /Find a member/ });
    await find.fill('bo');
    await page.getByRole('option', { name: /Bob Builder \(bob, bob@example\.com\)/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Bob Builder' }).waitFor();
    expect(page.url()).toBe(`${d.url}/admin/members/${bob.id}`);
    await expect.poll(() => timeline(page).count()).toBe(2);

    // Credit 10.00 EUR; the double-clicked button posts once.
    await page.getByRole('button', { name: 'Credit or debit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Amount').fill('10.00');
    expect(await dialog.getByLabel('Currency').inputValue()).toBe('EUR');
    await dialog.getByLabel('Note (required)').fill('Goodwill, ticket 77');
    await dialog.getByRole('button', { name: 'Credit 10.00 EUR' }).dblclick();
    await page.getByRole('main').getByText('Credited 10.00 EUR. Available now: 13.00 EUR.').waitFor();
    expect(await dialog.count()).toBe(0);
    expect(await ledgerOf(d, bob.id)).toEqual({ available: '13.00', entries: '3' });
    await expect.poll(() => timeline(page).count()).toBe(3);

    // Reverse the credit, with the confirmation.
    const credit = timeline(page).filter({ hasText: 'Goodwill, ticket 77' });
    await credit.getByRole('button', { name: 'Reverse' }).click();
    await dialog.getByText(/This posts a reversal of the entry of 10\.00 EUR/).waitFor();
    await dialog.getByRole('button', { name: 'Reverse entry' }).click();
    await page
      .getByRole('main')
      .getByText(/reversed by entry #\d+ \(-10\.00 EUR\)/)
      .waitFor();
    expect(await ledgerOf(d, bob.id)).toEqual({ available: '3.00', entries: '4' });
    await expect.poll(() => timeline(page).count()).toBe(4);
    await expect.poll(() => timeline(page).filter({ hasText: 'Goodwill, ticket 77' }).filter({ hasText: 'Reversed by' }).count()).toBe(1);

    // A payout's entry: the API refuses, and the modal says why in words; Escape closes it.
    await timeline(page).filter({ hasText: 'Payout' }).first().getByRole('button', { name: 'Reverse' }).click();
    await dialog.getByRole('button', { name: 'Reverse entry' }).click();
    await dialog.getByText('A payout entry cannot be reversed; cancel the payout instead.').waitFor();
    await screenshot(page, `member-refusal-${dialect}`);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await ledgerOf(d, bob.id)).toEqual({ available: '3.00', entries: '4' });

    // Escape closes a modal and focus is back on the button that opened it.
    await page.getByRole('button', { name: 'Credit or debit' }).click();
    await dialog.getByLabel('Amount').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Credit or debit');

    // A debit past the balance: refused in words; the corrected debit (a new request) then runs.
    await page.keyboard.press('Enter');
    await dialog.getByLabel('Type').selectOption('debit');
    await dialog.getByLabel('Amount').fill('50.00');
    await dialog.getByLabel('Note (required)').fill('Chargeback, ticket 78');
    await dialog.getByRole('button', { name: 'Debit 50.00 EUR' }).click();
    await dialog.getByText("The member's available balance (3.00 EUR) does not cover 50.00.").waitFor();
    await dialog.getByLabel('Amount').fill('1.00');
    await dialog.getByRole('button', { name: 'Debit 1.00 EUR' }).click();
    await page.getByRole('main').getByText('Debited 1.00 EUR. Available now: 2.00 EUR.').waitFor();
    expect(await ledgerOf(d, bob.id)).toEqual({ available: '2.00', entries: '5' });

    // The ledger's filters are the URL: only the payout entry.
    await page.goto(`${d.url}/admin/members/${bob.id}?type=payout`);
    await expect.poll(() => timeline(page).count()).toBe(1);
    expect(await timeline(page).textContent()).toContain('Payout 1 via paypal');

    await screenshot(page, `member-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // The member's orders, payouts and referrals, each a tab with its own URL.
    await d.ctx.orders.record(
      {
        network: 'awin',
        transaction_id: 'T-BOB-1',
        source: 'postback',
        sale_amount: '100.00',
        commission: '8.00',
        currency: 'EUR',
        member_id: bob.id,
        status: 'pending',
      },
      'system',
    );
    expect((await d.api('POST', '/referrals', { referrer_id: carol.id, referee_id: bob.id })).status).toBe(201);
    const sections = page.getByRole('navigation', { name: 'Member sections' });
    await sections.getByRole('link', { name: 'Orders' }).click();
    await expect.poll(() => page.url()).toBe(`${d.url}/admin/members/${bob.id}/orders`);
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'T-BOB-1' }).count()).toBe(1);
    await screenshot(page, `member-orders-${dialect}`);
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).textContent()).toContain('Pending (1)');
    expect(await seriousViolations(page)).toEqual([]);
    await sections.getByRole('link', { name: 'Payouts' }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).textContent()).toContain('Pending (1)');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'paypal' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await sections.getByRole('link', { name: 'Referrals' }).click();
    await page.getByRole('heading', { name: 'Referred by' }).waitFor();
    expect(await page.getByRole('main').getByRole('link', { name: 'Carol Jones' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);

    // A member without any entry yet is named by the lookup; an unknown id is said to be unknown.
    const dave = await d.ctx.users.create({ login: 'dave', email: 'dave@example.com', display_name: 'Dave Dee', role: 'member' });
    await page.goto(`${d.url}/admin/members/${dave.id}`);
    await page.getByRole('heading', { level: 1, name: 'Dave Dee (dave, dave@example.com)' }).waitFor();
    await page.getByText('No balance yet').waitFor();
    await page.goto(`${d.url}/admin/members/999999`);
    await page.getByRole('heading', { level: 1, name: 'Member not found' }).waitFor();
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
