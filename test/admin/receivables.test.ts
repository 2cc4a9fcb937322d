// The receivables in a real browser, on a real daemon, per dialect: a network's page shows what it
// still owes by age beside what members are owed, and its variances (a payment short, a payment
// for a transaction we do not know, an order unpaid past the terms), each order a link to its
// page; the overview's Receivables card shows the same sums and links each network to its page.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon, type Daemon, type Json } from '../helpers/daemon.js';
import { seedOrder, seedPayment } from '../helpers/network-payments.js';

const DAY = 86_400_000;

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Awin owes EUR in every bucket, paid one order short and paid a transaction we do not know; Admitad owes a little USD. */
async function seed(d: Daemon): Promise<{ short: number }> {
  const { ctx } = d;
  const now = Date.now();
  const ago = (days: number) => new Date(now - days * DAY - 3 * 3600_000);
  for (const [days, commission] of [
    [10, 10_000],
    [45, 20_000],
    [75, 30_000],
    [120, 40_000],
  ])
    await seedOrder(ctx, { network: 'awin', status: 'approved', currency: 'EUR', commission, statusChangedAt: ago(days) });
  const short = await seedOrder(ctx, { network: 'awin', status: 'approved', currency: 'EUR', commission: 50_000, statusChangedAt: ago(100) });
  await seedPayment(ctx, {
    network: 'awin',
    paymentId: 'PAY-7',
    transactionId: short.transactionId,
    orderId: short.id,
    amount: 45_000,
    currency: 'EUR',
    paidAt: ago(5),
  });
  await seedPayment(ctx, { network: 'awin', paymentId: 'PAY-7', transactionId: 'GHOST-9', orderId: null, amount: 1_234, currency: 'EUR', paidAt: ago(5) });
  await seedOrder(ctx, { network: 'admitad', status: 'approved', currency: 'USD', commission: 1_000, statusChangedAt: ago(5) });
  const ann = await ctx.users.create({ login: 'ann', email: 'ann@example.com', role: 'member' });
  await ctx.ledger.adjust({ member_id: ann.id, type: 'credit', amount: '30.00', currency: 'EUR', note: 'seed' }, 'test');
  return { short: short.id };
}

/** The rows of the `n`th table of the receivables card: the cells' text, the row's heading first. */
function tableRows(page: Page, n: number): Promise<string[][]> {
  return page
    .locator('.ct-receivables table')
    .nth(n)
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => Array.from((tr as any).children as { textContent: string | null }[], (c) => (c.textContent ?? '').trim())));
}

describeDaemon('the admin screens: receivables', (use, dialect) => {
  let short = 0;
  beforeAll(async () => {
    ({ short } = await seed(use()));
  });

  // Two pages in a real browser on a machine shared with other work: more than the default 30 s.
  it("shows a network's receivables by age beside the liabilities, with its variances, and the overview's card with the same sums", async () => {
    const d = use();
    const api = (await d.api('GET', '/networks/awin/receivables')).body as Json;
    expect(api.currencies.map((c: Json) => [c.currency, c.unpaid.commission])).toEqual([['EUR', '1000.00']]);
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');

    await page.goto(`${d.url}/admin/networks/awin`);
    await page.getByRole('heading', { level: 2, name: 'Receivables' }).waitFor();
    await page.getByText('Payment terms: 90 days').waitFor();
    // Currency, unpaid orders, unpaid, the four buckets (with their counts), past the terms, paid, members are owed.
    await expect
      .poll(() => tableRows(page, 0))
      .toEqual([['EUR', '4', '1000.00', '100.00 (1)', '200.00 (1)', '300.00 (1)', '400.00 (1)', '400.00 (1)', '500.00 (1)', '30.00']]);
    expect(await tableRows(page, 1)).toEqual([[`#${short}`, expect.stringMatching(/^RCV-/), 'approved', '500.00 EUR', '450.00 EUR', '-50.00']]);
    expect(await tableRows(page, 2)).toEqual([['GHOST-9', 'PAY-7', '12.34 EUR', expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]]);
    expect(await tableRows(page, 3)).toEqual([[expect.stringMatching(/^#\d+$/), expect.stringMatching(/^RCV-/), '400.00 EUR', expect.any(String), '120']]);
    await screenshot(page, `network-receivables-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    // An order of a variance opens its page.
    await page
      .locator('.ct-receivables')
      .getByRole('link', { name: `#${short}` })
      .click();
    await expect.poll(() => page.url()).toContain(`/admin/orders/${short}`);

    // The overview's card: the same sums per currency beside what members are owed, the variances per network.
    await page.goto(`${d.url}/admin/overview`);
    await page.getByRole('heading', { level: 2, name: /^Receivables/ }).waitFor();
    await expect
      .poll(() => tableRows(page, 0))
      .toEqual([
        ['EUR', '1000.00 (4)', '100.00', '200.00', '300.00', '400.00', '400.00 (1)', '30.00'],
        ['USD', '10.00 (1)', '10.00', '0.00', '0.00', '0.00', '0.00 (0)', '—'],
      ]);
    expect(await tableRows(page, 1)).toEqual([
      ['admitad', 'USD', '10.00 (1)', '10.00', '0.00', '0.00', '0.00'],
      ['awin', 'EUR', '1000.00 (4)', '100.00', '200.00', '300.00', '400.00'],
    ]);
    expect(await tableRows(page, 2)).toEqual([['awin', '1', '1', '1']]);
    await screenshot(page, `overview-receivables-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator('.ct-receivables table').nth(2).getByRole('link', { name: 'awin' }).click();
    await expect.poll(() => page.url()).toContain('/admin/networks/awin');
    await page.getByRole('heading', { level: 2, name: 'Receivables' }).waitFor();

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
