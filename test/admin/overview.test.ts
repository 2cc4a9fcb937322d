// The overview in a real browser, on a real daemon, per dialect: it shows what the database holds
// (orders of several days in the chart's table, a payout waiting, postbacks per network, an error
// of the log), each number links to the list it counts with the filter in the URL, and the orders
// list it links to holds what the number says. With CASHTRACK_UPDATE_SCREENSHOTS=1 the SQLite run
// also writes the README's pictures into docs/images/.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon, type Daemon, type Json } from '../helpers/daemon.js';

const DAY = 86_400_000;
const README_IMAGES = join(process.cwd(), 'docs', 'images');

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** A README picture: copied from the test's screenshot only when asked (CASHTRACK_UPDATE_SCREENSHOTS=1), from the SQLite run. */
function keepForReadme(file: string, name: string, dialect: string): void {
  if (process.env.CASHTRACK_UPDATE_SCREENSHOTS !== '1' || dialect !== 'sqlite') return;
  mkdirSync(README_IMAGES, { recursive: true });
  copyFileSync(file, join(README_IMAGES, `${name}.png`));
}

/** Orders over several days (rows written as a network's poll would leave them), a payout waiting, postbacks, an error. */
async function seed(d: Daemon): Promise<void> {
  const { ctx } = d;
  const ann = await ctx.users.create({ login: 'ann', email: 'ann@example.com', role: 'member' });
  const bob = await ctx.users.create({ login: 'bob', email: 'bob@example.com', role: 'member' });
  const now = Date.now();
  // The orders are placed back from here: an hour earlier when now is in the first hour of a UTC
  // day, so that one day's orders (up to 40 minutes apart) never straddle midnight into another day.
  const base = now % DAY < 3_600_000 ? now - 3_600_000 : now;
  const columns = [
    'network',
    'transaction_id',
    'member_id',
    'sale_amount',
    'commission',
    'currency',
    'cashback',
    'status',
    'source',
    'status_changed_at',
    'created_at',
    'updated_at',
  ];
  const rows: unknown[][] = [];
  // 1 to 4 orders a day on 9 of the last 12 days, in minor units: commission 10.00–40.00, cashback half.
  for (let day = 0; day < 12; day++) {
    if (day % 4 === 3) continue;
    for (let i = 0; i <= day % 4; i++) {
      const at = new Date(base - day * DAY - (i + 1) * 600_000);
      const commission = 1000 * (i + 1) + day * 25;
      rows.push([
        'awin',
        `OV-${day}-${i}`,
        i % 2 ? bob.id : ann.id,
        commission * 10,
        commission,
        'USD',
        Math.floor(commission / 2),
        i === 0 ? 'approved' : 'pending',
        'poll',
        at,
        at,
        at,
      ]);
    }
  }
  rows.push([
    'awin',
    'OV-EUR',
    ann.id,
    50_000,
    5000,
    'EUR',
    2500,
    'approved',
    'poll',
    new Date(base - 2 * DAY),
    new Date(base - 2 * DAY),
    new Date(base - 2 * DAY),
  ]);
  rows.push(['shopnet', 'OV-UNMATCHED', null, 8000, 800, 'USD', 400, 'pending', 'poll', new Date(base - DAY), new Date(base - DAY), new Date(base - DAY)]);
  await ctx.db.transaction((t) => ctx.db.insertMany('orders', columns, rows, t));
  // Held for review, beside OV-1-0: the per-day figures leave it out, and so must the list a day's link opens.
  const heldAt = new Date(base - DAY - 600_000);
  await ctx.db.transaction((t) =>
    ctx.db.insertMany(
      'orders',
      [...columns, 'review', 'review_reason'],
      [['awin', 'OV-HELD', bob.id, 200_000, 20_000, 'USD', 10_000, 'pending', 'poll', heldAt, heldAt, heldAt, 'held', 'above_ceiling']],
      t,
    ),
  );
  await ctx.ledger.adjust({ member_id: ann.id, type: 'credit', amount: '80.00', currency: 'USD', note: 'seed' }, 'test');
  await ctx.payouts.create({ member_id: ann.id, amount: '25.00', method: 'paypal' }, 'test');
  const pb = (network: string, outcome: string, ageDays: number) => {
    const at = new Date(now - ageDays * DAY);
    return [at, at, network, 'GET', outcome, false, 1];
  };
  await ctx.db.transaction((t) =>
    ctx.db.insertMany(
      'postbacks',
      ['received_at', 'last_seen_at', 'network', 'method', 'outcome', 'test', 'repeat_count'],
      [pb('awin', 'accepted', 1), pb('awin', 'accepted', 2), pb('awin', 'rejected', 1), pb('shopnet', 'duplicate', 3)],
      t,
    ),
  );
  ctx.logger.error('networks', 'Awin answered 500 to the order poll', { network: 'awin' });
  await ctx.logger.flush();
}

/** The chart's table as the screen shows it: [day, orders, commission, cashback] per row. */
async function dailyTable(page: Page, currency: string): Promise<string[][]> {
  const rows = page.getByRole('region', { name: `Orders per day in ${currency}` }).locator('tbody tr');
  return rows.evaluateAll((trs) => trs.map((tr) => Array.from((tr as any).children as { textContent: string | null }[], (c) => (c.textContent ?? '').trim())));
}

describeDaemon('the admin screens: the overview', (use, dialect) => {
  beforeAll(async () => {
    await seed(use());
  });

  it('shows what the database holds, the chart’s table matching the per-day figures, each number a link to its list, filtered', async () => {
    const d = use();
    const api = (await d.api('GET', '/overview?days=30')).body as Json;
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('heading', { name: 'Orders and cashback per day' }).waitFor();
    await page.locator('.ct-chart canvas').first().waitFor();

    // The table beside the chart: the API's per-day figures in USD, newest day first.
    const expected = (api.orders.by_day as Json[])
      .filter((r) => r.currency === 'USD')
      .reverse()
      .map((r) => [r.day, String(r.count), r.commission, r.cashback]);
    expect(expected.length).toBe(9);
    await expect.poll(() => dailyTable(page, 'USD')).toEqual(expected);
    // The other currency is one choice away, in the URL.
    await page.getByLabel('Currency').selectOption('EUR');
    await expect.poll(() => page.url()).toContain('currency=EUR');
    await expect.poll(() => dailyTable(page, 'EUR')).toEqual([[(api.orders.by_day as Json[]).find((r) => r.currency === 'EUR')!.day, '1', '50.00', '25.00']]);
    await page.getByLabel('Currency').selectOption('USD');

    // Cards: what needs attention, postbacks per network, the latest error, each a link with its filter.
    const link = (name: RegExp) => page.getByRole('link', { name });
    await expect.poll(() => link(/1 unmatched orders/).getAttribute('href')).toBe('/admin/orders?unmatched=true');
    expect(await link(/1 held orders/).getAttribute('href')).toBe('/admin/orders?review=held');
    expect(await link(/1 payouts waiting/).getAttribute('href')).toBe('/admin/payouts?status=pending');
    await expect.poll(() => link(/0 jobs running/).getAttribute('href')).toBe('/admin/jobs?status=running');
    // The postbacks card's row (the Receivables card has awin rows too).
    const awin = page.locator('.ct-postbacks').getByRole('row', { name: /^awin/ });
    expect((await awin.locator('td').allTextContents()).map((t) => t.trim())).toEqual(['2', '0', '1', '0']);
    const rejected = new URL(`${d.url}${await awin.locator('td').nth(2).getByRole('link').getAttribute('href')}`);
    expect(rejected.pathname).toBe('/admin/networks/awin');
    expect(Object.fromEntries(rejected.searchParams)).toMatchObject({ outcome: 'rejected', test: 'false' });
    // The window's start as the screen's own GET /overview gave it (a moment after the test's).
    expect(Date.parse(rejected.searchParams.get('after')!) - Date.parse(api.orders.since)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(rejected.searchParams.get('after')!) - Date.parse(api.orders.since)).toBeLessThan(60_000);
    await expect.poll(() => page.getByRole('link', { name: 'Awin answered 500 to the order poll' }).count()).toBe(1);
    expect(await link(/1 errors in the log/).getAttribute('href')).toBe('/admin/log?level=error');

    const file = await screenshot(page, `overview-full-${dialect}`);
    keepForReadme(file, 'overview', dialect);
    expect(await seriousViolations(page)).toEqual([]);

    // A day's count lands on the orders list filtered to that day and currency and to orders not
    // held (OV-HELD is on that day), holding as many orders, the filter shown.
    const heldDay = (await d.api('GET', '/orders?review=held')).body[0].created_at.slice(0, 10);
    const [day, count] = expected.find((r) => r[0] === heldDay)!;
    await page
      .getByRole('region', { name: 'Orders per day in USD' })
      .getByRole('row', { name: new RegExp(`^${day}`) })
      .getByRole('link')
      .click();
    await expect.poll(() => page.url()).toContain('/admin/orders?');
    const landed = new URL(page.url()).searchParams;
    expect(landed.get('currency')).toBe('USD');
    expect(Date.parse(landed.get('before')!) - Date.parse(landed.get('after')!)).toBe(DAY + 1);
    expect(landed.get('held')).toBe('false');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'OV-' }).count()).toBe(Number(count));
    expect(await page.getByRole('row').filter({ hasText: 'OV-HELD' }).count()).toBe(0);
    await expect.poll(() => page.locator('main').textContent()).toMatch(/Held is:? ?Not held/);
    // And the unmatched number lands on the unmatched orders.
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Overview' }).click();
    await link(/1 unmatched orders/).click();
    await expect.poll(() => page.url()).toContain('unmatched=true');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'OV-UNMATCHED' }).count()).toBe(1);
    const list = await screenshot(page, `orders-unmatched-${dialect}`);
    expect(list).toBeTruthy();

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows the orders list for the README, all statuses, newest first', async () => {
    const d = use();
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/orders?per_page=20`);
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('All (');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'OV-' }).count()).toBe(20);
    keepForReadme(await screenshot(page, `orders-list-${dialect}`), 'orders', dialect);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
