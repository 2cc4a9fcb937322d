// The orders and payouts screens in a real browser, on a real daemon: the overview's links land on
// the unmatched and held queues; an unmatched order is assigned to a member picked by name; a held
// order is released (a double click posts once, and the cashback enters pending once); a manual
// order is entered and its status changed on its own page; a payout is completed with its
// reference (again double-clicked) and another cancelled with its reason.
import type { Browser, Page } from 'playwright-core';
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

/** Every POST the page sends to `path` (in the namespace), with its Idempotency-Key. */
function watchPosts(page: Page, path: RegExp): { key: string | undefined }[] {
  const posts: { key: string | undefined }[] = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && path.test(new URL(req.url()).pathname)) posts.push({ key: req.headers()['idempotency-key'] });
  });
  return posts;
}

describeDaemon('the admin screens: orders', (use, dialect) => {
  it('assigns an unmatched order to a member picked by name, from the queue the overview links to', async () => {
    const d = use();
    const carol = await d.ctx.users.create({ login: 'carol', email: 'carol@example.com', display_name: 'Carol Member', role: 'member' });
    const matched = await d.ctx.orders.record(
      { network: 'awin', transaction_id: 'M-1', source: 'postback', sale_amount: '80.00', commission: '8.00', member_id: carol.id },
      'postback',
    );
    const unmatched = await d.ctx.orders.record(
      { network: 'awin', transaction_id: 'U-1', source: 'postback', sale_amount: '50.00', commission: '5.00', sub_id: 'nobody-here' },
      'postback',
    );
    expect(unmatched.member).toBeNull();
    expect(matched.member?.id).toBe(carol.id);
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    // The overview's link to the unmatched orders.
    await page.getByRole('link', { name: /unmatched orders/ }).click();
    await expect.poll(() => page.url()).toContain('unmatched=true');
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: /[MU]-1/ });
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('U-1');
    expect(await page.getByRole('navigation', { name: 'Queues' }).textContent()).toContain('Unmatched (1)');
    await screenshot(page, `orders-unmatched-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    const posts = watchPosts(page, /\/orders\/\d+\/assign$/);
    await rows.first().getByRole('button', { name: 'Assign' }).click();
    const modal = page.getByRole('dialog', { name: `Assign order #${unmatched.id}` });
    await modal.getByRole('combobox', { name: 'Member' }).fill('car');
    await modal.getByRole('option', { name: /Carol Member \(carol/ }).click();
    await screenshot(page, `orders-assign-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await modal.getByRole('button', { name: 'Assign' }).dblclick();
    await page.locator('.components-notice').getByText(`Order #${unmatched.id} is now Carol Member's.`).waitFor();
    await expect.poll(() => rows.count()).toBe(0);
    expect(posts).toHaveLength(1);
    const after = await d.api('GET', `/orders/${unmatched.id}`);
    expect(after.body.member).toMatchObject({ id: carol.id, login: 'carol' });
    const balances = await d.api('GET', `/ledger/members?search=carol`);
    expect(JSON.stringify(balances.body)).toContain('"pending":"6.50"'); // 4.00 of M-1 and now 2.50 of U-1
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('releases an order held for review once, however often the button is clicked, and declines another from its own page', async () => {
    const d = use();
    const dave = await d.ctx.users.create({ login: 'dave', email: 'dave@example.com', display_name: 'Dave Member', role: 'member' });
    // A commission above orders.review_above (1000.00 by default) from a network: held.
    const held = await d.ctx.orders.record(
      {
        network: 'awin',
        transaction_id: 'H-1',
        source: 'postback',
        sale_amount: '20000.00',
        commission: '1500.00',
        member_id: dave.id,
        raw: { id: 'H-1', commission: '1500.00', api_key: 'kept secret' },
      },
      'postback',
    );
    expect(held.review?.state).toBe('held');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('link', { name: /held orders/ }).click();
    await expect.poll(() => page.url()).toContain('review=held');
    const row = page.getByRole('row').filter({ hasText: 'H-1' });
    await row.waitFor();
    expect(await page.getByRole('navigation', { name: 'Queues' }).textContent()).toContain('Held for review (1)');
    const posts = watchPosts(page, /\/orders\/\d+\/release$/);
    await row.getByRole('button', { name: 'Release' }).click();
    const modal = page.getByRole('dialog', { name: `Release held order #${held.id}` });
    expect(await modal.textContent()).toContain('the commission is above the review ceiling');
    await modal.getByLabel('Note').fill('Checked with the network: a bonus.');
    await modal.getByRole('button', { name: 'Release' }).dblclick();
    await page.locator('.components-notice').getByText(`Order #${held.id} released.`).waitFor();
    await expect.poll(() => row.count()).toBe(0);
    expect(posts).toHaveLength(1);
    const after = await d.api('GET', `/orders/${held.id}`);
    expect(after.body.review.state).toBe('released');
    const balance = await d.api('GET', `/ledger/members?search=dave`);
    expect(JSON.stringify(balance.body)).toContain(`"pending":"${after.body.cashback}"`);
    // Its own page says who released it and shows the network's record, secrets redacted.
    await page.goto(`${d.url}/admin/orders/${held.id}`);
    await page.getByRole('heading', { level: 1, name: `Order #${held.id}` }).waitFor();
    expect(await page.locator('.components-notice').textContent()).toContain('released by user:');
    const record = await page.getByRole('region', { name: "The network's record as received" }).textContent();
    expect(record).toContain('1500.00');
    expect(record).not.toContain('kept secret');
    expect(await page.getByRole('button', { name: 'Release' }).count()).toBe(0);
    await screenshot(page, `order-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // Another held order is declined from its own page: declined, and no money moves.
    const second = await d.ctx.orders.record(
      { network: 'awin', transaction_id: 'H-2', source: 'postback', sale_amount: '30000.00', commission: '2500.00', member_id: dave.id },
      'postback',
    );
    await page.goto(`${d.url}/admin/orders/${second.id}`);
    await page.getByRole('button', { name: 'Decline' }).click();
    const decline = page.getByRole('dialog', { name: `Decline held order #${second.id}` });
    await decline.getByRole('button', { name: 'Decline' }).click();
    await page.locator('.components-notice').getByText(`Order #${second.id} declined.`).waitFor();
    expect((await d.api('GET', `/orders/${second.id}`)).body).toMatchObject({ status: 'declined', review: { state: 'declined' } });
    expect(JSON.stringify((await d.api('GET', `/ledger/members?search=dave`)).body)).toContain(`"pending":"${after.body.cashback}"`);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens the overview's count of pending orders in a currency as the list filtered alike, then narrows it to one member", async () => {
    const d = use();
    const gina = await d.ctx.users.create({ login: 'gina', email: 'gina@example.com', display_name: 'Gina Member', role: 'member' });
    const kim = await d.ctx.users.create({ login: 'kim', email: 'kim@example.com', display_name: 'Kim Member', role: 'member' });
    const eur = { network: 'awin', source: 'postback' as const, sale_amount: '40.00', commission: '4.00', currency: 'EUR' };
    await d.ctx.orders.record({ ...eur, transaction_id: 'G-1', member_id: gina.id }, 'postback');
    await d.ctx.orders.record({ ...eur, transaction_id: 'G-2', member_id: gina.id }, 'postback');
    await d.ctx.orders.record({ ...eur, transaction_id: 'G-3', member_id: gina.id, status: 'approved' }, 'postback');
    await d.ctx.orders.record({ ...eur, transaction_id: 'K-1', member_id: kim.id }, 'postback');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    const count = page.locator('tr', { hasText: 'EUR' }).filter({ hasText: 'pending' }).getByRole('link');
    expect(await count.textContent()).toBe('3');
    await count.click();
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    const url = new URL(page.url());
    expect(url.searchParams.get('status')).toBe('pending');
    expect(url.searchParams.get('currency')).toBe('EUR');
    expect(url.searchParams.get('after')).toBeTruthy();
    const rows = page.getByRole('row').filter({ hasText: /[GK]-\d/ });
    await expect.poll(() => rows.count()).toBe(3);
    await page.getByRole('combobox', { name: 'Member' }).fill('gin');
    await page.getByRole('option', { name: /Gina Member/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('member_id')).toBe(String(gina.id));
    await expect.poll(() => rows.count()).toBe(2);
    expect(new URL(page.url()).searchParams.get('currency')).toBe('EUR');
    expect(await page.getByRole('navigation', { name: 'Views' }).textContent()).toContain('Approved (1)');
    await screenshot(page, `orders-filtered-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('enters a missing-cashback claim by hand and approves it on its own page', async () => {
    const d = use();
    await d.ctx.users.create({ login: 'erin', email: 'erin@example.com', display_name: 'Erin Member', role: 'member' });
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/orders`);
    await page.getByRole('button', { name: 'Enter an order' }).click();
    const modal = page.getByRole('dialog', { name: 'Enter an order' });
    await modal.getByLabel('Network').selectOption('awin');
    await modal.getByLabel('Transaction id').fill('CLAIM-7');
    await modal.getByRole('combobox', { name: 'Member' }).fill('eri');
    await modal.getByRole('option', { name: /Erin Member/ }).click();
    await modal.getByLabel('Sale amount').fill('60.00');
    await modal.getByLabel('Commission').fill('6.00');
    await modal.getByLabel('Note (required)').fill('Claim #7: receipt attached');
    await modal.getByRole('button', { name: 'Record the order' }).click();
    await page.getByRole('heading', { level: 1, name: /Order #\d+/ }).waitFor();
    const id = Number(/\/orders\/(\d+)/.exec(page.url())?.[1]);
    expect(await page.locator('.ct-dl').textContent()).toContain('CLAIM-7');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Change status' }).click();
    const status = page.getByRole('dialog', { name: `Change the status of order #${id}` });
    await status.getByLabel('New status').selectOption('approved');
    await status.getByRole('button', { name: 'Mark approved' }).click();
    await page.locator('.components-notice').getByText(`Order #${id} is now approved.`).waitFor();
    const after = await d.api('GET', `/orders/${id}`);
    expect(after.body).toMatchObject({ status: 'approved', source: 'manual', member: { login: 'erin' }, cashback_entry_id: expect.any(Number) });
    // Escape closes a modal and focus returns to the button that opened it.
    await page.getByRole('button', { name: 'Change status' }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Change status');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describeDaemon('the admin screens: payouts', (use, dialect) => {
  it('completes a pending payout with its reference (a double click posts once), cancels another with its reason, and shows a refusal in words', async () => {
    const d = use();
    const fay = await d.ctx.users.create({ login: 'fay', email: 'fay@example.com', display_name: 'Fay Member', role: 'member' });
    await d.ctx.ledger.adjust({ member_id: fay.id, type: 'credit', amount: '100.00', note: 'Earnings' }, 'test');
    const first = await d.ctx.payouts.create({ member_id: fay.id, amount: '20.00', method: 'paypal', details: 'fay@paypal.example' }, 'test');
    const second = await d.ctx.payouts.create({ member_id: fay.id, amount: '30.00', method: 'bank_transfer' }, 'test');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    // The overview's link to the payouts waiting.
    await page.getByRole('link', { name: /payouts waiting/ }).click();
    await expect.poll(() => page.url()).toContain('status=pending');
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('Pending (2)');
    const rows = page.getByRole('row').filter({ hasText: 'fay' });
    await expect.poll(() => rows.count()).toBe(2);
    await screenshot(page, `payouts-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    const posts = watchPosts(page, /\/payouts\/\d+\/complete$/);
    await rows.filter({ hasText: 'paypal' }).getByRole('button', { name: 'Complete' }).click();
    const modal = page.getByRole('dialog', { name: `Complete payout #${first.payout.id}` });
    await modal.getByLabel('Payment reference').fill('PP-778899');
    await modal.getByRole('button', { name: 'Mark 20.00 USD paid' }).dblclick();
    await page.locator('.components-notice').getByText(`Payout #${first.payout.id} is paid (reference PP-778899).`).waitFor();
    expect(posts).toHaveLength(1);
    expect((await d.api('GET', `/payouts/${first.payout.id}`)).body).toMatchObject({ status: 'paid', reference: 'PP-778899' });
    await expect.poll(() => rows.count()).toBe(1);

    // Filters by method reach the API and the URL.
    await page.goto(`${d.url}/admin/payouts?method=bank_transfer`);
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'fay' }).count()).toBe(1);
    const row = page.getByRole('row').filter({ hasText: 'bank_transfer' });
    await row.getByRole('button', { name: /Actions/ }).click();
    await page.getByRole('menuitem', { name: 'Cancel' }).click();
    const cancel = page.getByRole('dialog', { name: `Cancel payout #${second.payout.id}` });
    expect(await cancel.getByRole('button', { name: 'Cancel the payout' }).isDisabled()).toBe(true);
    await cancel.getByLabel('Reason (required)').fill('The IBAN bounced.');
    await cancel.getByRole('button', { name: 'Cancel the payout' }).click();
    await page.locator('.components-notice').getByText(`Payout #${second.payout.id} is cancelled`).waitFor();
    expect((await d.api('GET', `/payouts/${second.payout.id}`)).body).toMatchObject({ status: 'cancelled', reason: 'The IBAN bounced.' });
    const balance = await d.api('GET', `/ledger/members?search=fay`);
    expect(JSON.stringify(balance.body)).toContain('"available":"80.00"');

    // A payout closed elsewhere while its modal is open: the API's refusal, in words, in the modal.
    const third = await d.ctx.payouts.create({ member_id: fay.id, amount: '15.00', method: 'paypal' }, 'test');
    await page.goto(`${d.url}/admin/payouts?status=pending`);
    await page.getByRole('row').filter({ hasText: '15.00' }).getByRole('button', { name: 'Complete' }).click();
    const late = page.getByRole('dialog', { name: `Complete payout #${third.payout.id}` });
    await d.ctx.payouts.cancel(third.payout.id, { reason: 'Asked to stop' }, 'test');
    await late.getByRole('button', { name: 'Mark 15.00 USD paid' }).click();
    await expect.poll(() => late.locator('.components-notice.is-error').textContent()).toMatch(/cancelled|closed/i);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
