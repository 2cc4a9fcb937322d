// Bulk row actions in a real browser, on a real daemon: held orders released many at a time (each
// its own request with its own Idempotency-Key, a double click posting each once, a row the API
// refuses listed with its message in words), pending payouts cancelled many at a time with the
// reason the single-row modal requires, and focus back on the row's Actions button after a row
// action's modal is closed by Escape or Cancel.
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

/** Every POST the page sends to a path matching `path`, with its Idempotency-Key. */
function watchPosts(page: Page, path: RegExp): { path: string; key: string | undefined }[] {
  const posts: { path: string; key: string | undefined }[] = [];
  page.on('request', (req) => {
    const p = new URL(req.url()).pathname;
    if (req.method() === 'POST' && path.test(p)) posts.push({ path: p, key: req.headers()['idempotency-key'] });
  });
  return posts;
}

const activeLabel = (page: Page) => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label') ?? null);
const activeRowText = (page: Page) => page.evaluate(() => (globalThis as any).document.activeElement?.closest('tr')?.textContent ?? null);

describeDaemon('the admin screens: bulk actions', (use, dialect) => {
  it('releases held orders in bulk, each once with its own key, and lists the one the API refused with its message', async () => {
    const d = use();
    const hana = await d.ctx.users.create({ login: 'hana', email: 'hana@example.com', display_name: 'Hana Member', role: 'member' });
    const held = [];
    for (const n of [1, 2, 3]) {
      const order = await d.ctx.orders.record(
        { network: 'awin', transaction_id: `BH-${n}`, source: 'postback', sale_amount: '20000.00', commission: `${1000 + n * 100}.00`, member_id: hana.id },
        'postback',
      );
      expect(order.review?.state).toBe('held');
      held.push(order);
    }
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/orders?review=held`);
    const rows = page.getByRole('row').filter({ hasText: /BH-\d/ });
    await expect.poll(() => rows.count()).toBe(3);
    for (const n of [1, 2, 3])
      await rows
        .filter({ hasText: `BH-${n}` })
        .getByRole('checkbox')
        .check();
    const posts = watchPosts(page, /\/orders\/\d+\/release$/);
    await page.locator('.dataviews-bulk-actions-footer__action-buttons').getByRole('button', { name: 'Release', exact: true }).click();
    const modal = page.getByRole('dialog', { name: 'Release 3 held orders' });
    await modal.waitFor();
    expect(await modal.textContent()).toContain(`Order #${held[1]!.id}`);
    await modal.getByLabel('Note').fill('Checked with the network.');
    await screenshot(page, `orders-bulk-release-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    // Someone else declines BH-2 while the confirmation is open: the API refuses that row only.
    expect((await d.api('POST', `/orders/${held[1]!.id}/decline`, { note: 'Fraud' })).status).toBe(200);
    await modal.getByRole('button', { name: 'Release 3 orders' }).dblclick();
    const outcome = modal.getByRole('list', { name: 'Outcome per row' });
    await outcome.waitFor();
    expect(await modal.getByRole('status').textContent()).toBe('3 of 3 done, 1 not changed.');
    const refused = await d.api('POST', `/orders/${held[1]!.id}/release`, {});
    expect(refused.status).toBe(409);
    const lines = await outcome.getByRole('listitem').allTextContents();
    // In the list's order (newest first).
    expect(lines).toEqual([
      `Order #${held[2]!.id} (awin BH-3): released`,
      `Order #${held[1]!.id} (awin BH-2): refused: ${(refused.body as { message: string }).message}`,
      `Order #${held[0]!.id} (awin BH-1): released`,
    ]);
    // Each row posted once, each with its own key, whatever the double click did.
    expect(posts.map((p) => p.path).sort()).toEqual(held.map((o) => `/wp-json/svc/v1/orders/${o.id}/release`).sort());
    expect(new Set(posts.map((p) => p.key)).size).toBe(3);
    expect(posts.every((p) => typeof p.key === 'string' && p.key.length > 0)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    for (const [i, state] of [
      [0, 'released'],
      [1, 'declined'],
      [2, 'released'],
    ] as const) {
      expect((await d.api('GET', `/orders/${held[i]!.id}`)).body).toMatchObject({ review: { state } });
    }
    // The list was read again behind the modal: no held order is left.
    await modal.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => rows.count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Queues' }).textContent()).toContain('Held for review (0)');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('cancels pending payouts in bulk with the required reason, crediting each amount back once', async () => {
    const d = use();
    const ivy = await d.ctx.users.create({ login: 'ivy', email: 'ivy@example.com', display_name: 'Ivy Member', role: 'member' });
    await d.ctx.ledger.adjust({ member_id: ivy.id, type: 'credit', amount: '100.00', note: 'Earnings' }, 'test');
    const a = await d.ctx.payouts.create({ member_id: ivy.id, amount: '20.00', method: 'paypal' }, 'test');
    const b = await d.ctx.payouts.create({ member_id: ivy.id, amount: '30.00', method: 'paypal' }, 'test');
    const kept = await d.ctx.payouts.create({ member_id: ivy.id, amount: '15.00', method: 'paypal' }, 'test');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/payouts?status=pending`);
    const rows = page.getByRole('row').filter({ hasText: 'ivy' });
    await expect.poll(() => rows.count()).toBe(3);
    await rows.filter({ hasText: '20.00' }).getByRole('checkbox').check();
    await rows.filter({ hasText: '30.00' }).getByRole('checkbox').check();
    const posts = watchPosts(page, /\/payouts\/\d+\/cancel$/);
    await page.locator('.dataviews-bulk-actions-footer__action-buttons').getByRole('button', { name: 'Cancel payouts' }).click();
    const modal = page.getByRole('dialog', { name: 'Cancel 2 payouts' });
    const submit = modal.getByRole('button', { name: 'Cancel 2 payouts' });
    // The reason is required, as for one payout.
    expect(await submit.isDisabled()).toBe(true);
    await modal.getByLabel('Reason (required)').fill('Duplicate requests.');
    await screenshot(page, `payouts-bulk-cancel-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await submit.dblclick();
    await expect.poll(() => modal.getByRole('status').textContent()).toBe('2 of 2 done.');
    expect(posts).toHaveLength(2);
    expect(new Set(posts.map((p) => p.key)).size).toBe(2);
    for (const p of [a, b]) {
      expect((await d.api('GET', `/payouts/${p.payout.id}`)).body).toMatchObject({ status: 'cancelled', reason: 'Duplicate requests.' });
    }
    expect((await d.api('GET', `/payouts/${kept.payout.id}`)).body).toMatchObject({ status: 'pending' });
    expect(JSON.stringify((await d.api('GET', '/ledger/members?search=ivy')).body)).toContain('"available":"85.00"');
    await modal.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("returns focus to the row's Actions button when a row action's modal closes by Escape or Cancel, on the orders and payouts lists", async () => {
    const d = use();
    const jo = await d.ctx.users.create({ login: 'jo', email: 'jo@example.com', display_name: 'Jo Member', role: 'member' });
    await d.ctx.orders.record(
      { network: 'awin', transaction_id: 'FO-1', source: 'postback', sale_amount: '50.00', commission: '5.00', member_id: jo.id },
      'postback',
    );
    await d.ctx.orders.record(
      { network: 'awin', transaction_id: 'FO-2', source: 'postback', sale_amount: '60.00', commission: '6.00', member_id: jo.id },
      'postback',
    );
    await d.ctx.ledger.adjust({ member_id: jo.id, type: 'credit', amount: '50.00', note: 'Earnings' }, 'test');
    await d.ctx.payouts.create({ member_id: jo.id, amount: '10.00', method: 'paypal' }, 'test');
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');

    // Orders: "Change status" from the second row's Actions menu, closed by Escape.
    await page.goto(`${d.url}/admin/orders`);
    const row = page.getByRole('row').filter({ hasText: 'FO-2' });
    await row.waitFor();
    await row.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Change status' }).click();
    await page.getByRole('dialog', { name: /Change the status of order/ }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => activeLabel(page)).toBe('Actions');
    expect(await activeRowText(page)).toContain('FO-2');

    // Payouts: "Cancel" from the row's Actions menu, closed by the modal's Cancel button.
    await page.goto(`${d.url}/admin/payouts?status=pending`);
    const payout = page.getByRole('row').filter({ hasText: 'jo' });
    await payout.waitFor();
    await payout.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Cancel' }).click();
    const modal = page.getByRole('dialog', { name: /Cancel payout #/ });
    await modal.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => activeLabel(page)).toBe('Actions');
    expect(await activeRowText(page)).toContain('10.00');
    // And the keyboard goes on from there: Enter opens the same menu again.
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Cancel' }).waitFor();
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
