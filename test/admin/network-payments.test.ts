// The network page's Payments panel in a real browser: a custom network with a payments mapping,
// its payment report imported from a file with each line's outcome shown, and the recent and
// unknown payment lines listed afterwards.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describeDaemon('the admin screens: network payments', (use, dialect) => {
  it("imports a custom network's payment report and lists its payment lines, unknown ones apart", async () => {
    const d = use();
    const saved = await d.api('POST', '/networks/paynet', {
      name: 'Pay Net',
      currency: 'EUR',
      statuses: { pending: 'pending', approved: 'approved', rejected: 'declined' },
      payments: { fields: { transaction_id: 'txn', payment_id: 'payment', amount: 'amount', currency: 'currency', paid_at: 'date' } },
    });
    expect([saved.status, saved.body]).toEqual([201, expect.anything()]);
    const order = await d.api('POST', '/orders', {
      network: 'paynet',
      transaction_id: 'PN-1',
      status: 'approved',
      sale_amount: '40.00',
      commission: '4.00',
      currency: 'EUR',
      note: 'missing cashback',
    });
    expect([order.status, order.body]).toEqual([201, expect.anything()]);
    const file = join(tmpdir(), `paynet-${dialect}-${process.pid}.csv`);
    writeFileSync(file, 'txn,payment,amount,currency,date\nPN-1,PAY-1,4.00,EUR,2026-11-20\nPN-999,PAY-1,2.50,EUR,2026-11-20\nPN-2,,1.00,EUR,2026-11-20\n');

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/networks/paynet`);
    await page.getByRole('heading', { level: 2, name: 'Payments' }).waitFor();
    await page.getByLabel("Payment report (CSV, read by the definition's payments mapping)").setInputFiles(file);
    await page.getByRole('button', { name: 'Import' }).click();
    const results = page.getByRole('table', { name: 'Import results' });
    await results.waitFor();
    await expect.poll(() => results.getByRole('row').count()).toBe(4);
    expect(await results.getByRole('row').nth(1).textContent()).toContain('recorded');
    expect(await results.getByRole('row').nth(2).textContent()).toContain('unknown');
    expect(await results.getByRole('row').nth(3).textContent()).toContain('invalid');
    await page.locator('#main').getByText('1 recorded, 0 already on file, 1 unknown, 0 conflict(s), 1 invalid.').waitFor();
    const unknown = page.getByRole('table', { name: 'Payment lines for unknown transactions' });
    await expect.poll(async () => (await unknown.textContent()) ?? '').toContain('PN-999');
    const recent = page.getByRole('table', { name: 'Recent payment lines' });
    expect(await recent.textContent()).toContain('PAY-1');
    expect(await recent.getByRole('link', { name: `#${(order.body as { id: number }).id}` }).count()).toBe(1);
    expect((await d.api('GET', `/orders/${(order.body as { id: number }).id}`)).body).toMatchObject({
      network_payment: { payment_id: 'PAY-1', amount: '4.00' },
    });
    await screenshot(page, `network-payments-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
