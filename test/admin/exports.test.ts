// The Exports screen in a real browser, on a real daemon: "Export" on the payouts list exports that
// list's current filters and lands on the Exports screen, where the file appears with its download
// link once written; the browser downloads it (the authenticated GET /exports/{id}/file) and it holds
// the list's rows; "New export" makes a JSON Lines file of balances; Delete removes one.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
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

describeDaemon('the admin screens: exports', (use, dialect) => {
  it('exports the filtered payouts list, downloads the file, makes a new export of balances and deletes one', async () => {
    const d = use();
    const members = [];
    for (const login of ['flo', 'gus']) {
      const m = await d.ctx.users.create({ login, email: `${login}@example.com`, display_name: login === 'gus' ? '=cmd()' : 'Flo', role: 'member' });
      await d.ctx.ledger.adjust({ member_id: m.id, type: 'credit', amount: '80.00', currency: 'EUR', note: 'earned' }, 'test');
      members.push(m);
    }
    await d.ctx.payouts.create({ member_id: members[0]!.id, amount: '20.00', currency: 'EUR', method: 'paypal' }, 'test');
    await d.ctx.payouts.create({ member_id: members[1]!.id, amount: '30.00', currency: 'EUR', method: 'bank' }, 'test');

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    // The payouts list filtered to one method: Export takes that filter along.
    await page.goto(`${d.url}/admin/payouts?method=bank`);
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    await page.getByRole('button', { name: 'Export' }).click();
    await page.getByRole('heading', { level: 1, name: 'Exports' }).waitFor();
    await page
      .locator('.components-notice')
      .getByText(/Export #\d+ requested/)
      .waitFor();
    const link = page.getByRole('link', { name: /^Download cashtrack-payouts-.*\.csv$/ });
    await link.waitFor({ timeout: 20_000 });
    await screenshot(page, `exports-list-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/^cashtrack-payouts-\d{8}-\d{4}-\d+\.csv$/);
    const rows = parse(readFileSync((await download.path())!, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows).toEqual([expect.objectContaining({ login: 'gus', display_name: "'=cmd()", amount: '30.00', currency: 'EUR', method: 'bank' })]);
    const listed = (await d.api('GET', '/exports')).body as { id: number; filters: Record<string, unknown> }[];
    expect(listed[0]!.filters).toEqual({ method: ['bank'] });

    // A new export from the form: every balance, as JSON Lines.
    await page.getByRole('button', { name: 'New export' }).click();
    const modal = page.getByRole('dialog', { name: 'New export' });
    await modal.getByRole('combobox', { name: 'What' }).selectOption('balances');
    await modal.getByRole('combobox', { name: 'Format' }).selectOption('jsonl');
    await modal.getByLabel('Currency (optional)').fill('eur');
    expect(await seriousViolations(page)).toEqual([]);
    await modal.getByRole('button', { name: 'Start the export' }).click();
    await page
      .locator('.components-notice')
      .getByText(/Export #\d+ requested/)
      .waitFor();
    const jsonLink = page.getByRole('link', { name: /^Download cashtrack-balances-.*\.jsonl$/ });
    await jsonLink.waitFor({ timeout: 20_000 });
    const [second] = await Promise.all([page.waitForEvent('download'), jsonLink.click()]);
    const lines = readFileSync((await second.path())!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { login: string; available: string });
    expect(lines.map((b) => [b.login, b.available]).sort()).toEqual([
      ['flo', '60.00'],
      ['gus', '50.00'],
    ]);

    // Delete the payouts export: the row goes, and its file with it.
    const first = listed[0]!.id;
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: /^Download cashtrack-payouts-/ }) });
    await row.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: `Delete export #${first}?` });
    await confirm.getByRole('button', { name: 'Delete the export and its file' }).click();
    await page.locator('.components-notice').getByText(`Export #${first} deleted.`).waitFor();
    expect((await d.api('GET', `/exports/${first}`)).status).toBe(404);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
