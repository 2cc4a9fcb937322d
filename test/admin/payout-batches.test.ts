// The payout batches screens in a real browser, on a real daemon: from the Payouts screen to the
// batches, a new batch made from a filter after a preview that shows the payout held out for a
// shared destination and names the other member, the batch's page with its items and the held
// payout, the CSV downloaded through the API, and a result CSV uploaded: one payout paid, the other
// cancelled and credited back once.
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

describeDaemon('the admin screens: payout batches', (use, dialect) => {
  it('makes a batch from a filter with a preview of the held, downloads its file and applies uploaded results', async () => {
    const d = use();
    const member = async (login: string, display_name: string) => {
      const u = await d.ctx.users.create({ login, email: `${login}@example.com`, display_name, role: 'member' });
      await d.ctx.ledger.adjust({ member_id: u.id, type: 'credit', amount: '100.00', note: 'earned' }, 'test');
      return u;
    };
    const ann = await member('ann', 'Ann Payee');
    const bob = await member('bob', 'Bob Payee');
    const cid = await member('cid', 'Cid Payee');
    const pa = (await d.ctx.payouts.create({ member_id: ann.id, amount: '20.00', method: 'bank_transfer', details: 'DE89 3704 0044 0532 0130 00' }, 'test'))
      .payout;
    const pc = (
      await d.ctx.payouts.create({ member_id: cid.id, amount: '30.00', method: 'bank_transfer', details: 'FR14 2004 1010 0505 0001 3M02 606' }, 'test')
    ).payout;
    const pb = (await d.ctx.payouts.create({ member_id: bob.id, amount: '25.00', method: 'bank_transfer', details: 'de89370400440532013000' }, 'test')).payout;

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/payouts`);
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    await page.getByRole('link', { name: 'payout batch' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payout batches' }).waitFor();
    await page.getByRole('button', { name: 'New batch' }).click();
    const modal = page.getByRole('dialog', { name: 'New payout batch' });
    await modal.getByLabel('Method (required)').fill('bank_transfer');
    await modal.getByRole('button', { name: 'Preview' }).click();
    await modal.getByText('1 payout(s) go').waitFor();
    await modal.getByText(`The destination is also used by bob (member ${bob.id}).`).waitFor();
    await modal.getByText(`The destination is also used by ann (member ${ann.id}).`).waitFor();
    await screenshot(page, `payout-batch-new-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await modal.getByRole('button', { name: 'Make the batch of 1 payouts' }).click();
    await page.getByRole('heading', { level: 1, name: /Payout batch #\d+/ }).waitFor();
    const batchId = Number(/#(\d+)/.exec((await page.getByRole('heading', { level: 1 }).textContent())!)![1]);
    await page.getByRole('heading', { name: 'Held out (2)' }).waitFor();
    await page.getByRole('cell', { name: `${batchId}-${pc.id}` }).waitFor();
    await screenshot(page, `payout-batch-page-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download payout-batch-${batchId}.csv` }).click();
    const file = await downloading;
    expect(file.suggestedFilename()).toBe(`payout-batch-${batchId}.csv`);
    const stream = await file.createReadStream();
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    expect(text).toContain(`${batchId}-${pc.id},${pc.id},${cid.id},cid,Cid Payee,30.00,USD,bank_transfer,FR14`);

    await page.getByRole('button', { name: 'Upload results' }).click();
    const upload = page.getByRole('dialog', { name: `Upload results of batch #${batchId}` });
    await upload.getByLabel('Or paste the CSV').fill(`item_ref,status,reference,reason\n${batchId}-${pc.id},failed,,Account closed\n`);
    await upload.getByRole('button', { name: 'Apply the results' }).dblclick();
    await page.locator('.components-notice').getByText(`Batch #${batchId} is finished: 1 payout(s) closed now, 0 paid, 1 failed, 0 pending.`).waitFor();
    expect((await d.api('GET', `/payouts/${pc.id}`)).body).toMatchObject({ status: 'cancelled', reason: 'Account closed' });
    expect((await d.api('GET', `/payouts/${pa.id}`)).body).toMatchObject({ status: 'pending', batch_id: null });
    expect((await d.api('GET', `/payouts/${pb.id}`)).body).toMatchObject({ status: 'pending', batch_id: null });
    expect((await d.ctx.ledger.balanceOf(cid.id, 'USD')).available).toBe('100.00');
    expect(await d.ctx.ledger.verify()).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
