// The payout batches screens in a real browser, on a real daemon: from the Payouts screen to the
// batches, a new batch made from a filter after a preview that shows the payout held out for a
// shared destination and names the other member, the batch's page with its items and the held
// payout, the CSV downloaded through the API, and a result CSV uploaded: one payout paid, the other
// cancelled and credited back once. And a SEPA batch: its pain.001 downloaded, the bank's pain.002
// pasted in, the rejected payout credited back.
import { readFileSync } from 'node:fs';
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

  it("downloads a SEPA batch's pain.001 and applies the bank's pain.002 pasted in", async () => {
    const d = use();
    await d.ctx.sepaSettings.configure({ name: 'Cashtrack Ltd', iban: 'DE02120300000000202051' }, 'test');
    const member = async (login: string, details: string) => {
      const u = await d.ctx.users.create({ login, email: `${login}@example.com`, display_name: `${login} Payee`, role: 'member' });
      await d.ctx.ledger.adjust({ member_id: u.id, type: 'credit', amount: '100.00', currency: 'EUR', note: 'earned' }, 'test');
      const { payout } = await d.ctx.payouts.create({ member_id: u.id, amount: '40.00', method: 'sepa', currency: 'EUR', details }, 'test');
      return { u, payout };
    };
    const dan = await member('dan', 'NL91 ABNA 0417 1643 00');
    const eve = await member('eve', 'AT61 1904 3002 3457 3201');
    const fay = await member('fay', 'BE68 5390 0754 7034');
    const made = await d.api('POST', '/payouts/batches', { method: 'sepa', currency: 'EUR' });
    expect(made.status).toBe(201);
    const batchId = (made.body as { batch: { id: number } }).batch.id;
    const refs = [dan, eve, fay].map((m) => `${batchId}-${m.payout.id}`);

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/payouts/batches/${batchId}`);
    await page.getByRole('heading', { level: 1, name: `Payout batch #${batchId}` }).waitFor();
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download cashtrack-batch-${batchId}.xml` }).click();
    const file = await downloading;
    let xml = '';
    for await (const chunk of await file.createReadStream()) xml += String(chunk);
    expect(xml).toContain(`<MsgId>CASHTRACK-BATCH-${batchId}</MsgId>`);
    expect(xml).toContain(`<EndToEndId>${refs[1]}</EndToEndId>`);
    await page.getByRole('button', { name: 'Mark sent' }).click();
    await page
      .getByRole('dialog', { name: `Mark batch #${batchId} sent` })
      .getByRole('button', { name: 'Mark sent' })
      .click();
    await page.locator('.components-notice').getByText(`Batch #${batchId} is sent.`).waitFor();

    const report = readFileSync(join(import.meta.dirname, '../fixtures/iso20022/pain.002.001.10-one-rejected.xml'), 'utf8')
      .replaceAll('CASHTRACK-BATCH-12', `CASHTRACK-BATCH-${batchId}`)
      .replaceAll('B12-P7', refs[0])
      .replaceAll('B12-P8', refs[1])
      .replaceAll('B12-P9', refs[2]);
    await page.getByRole('button', { name: 'Upload results' }).click();
    const upload = page.getByRole('dialog', { name: `Upload results of batch #${batchId}` });
    await upload.getByText('pain.002').first().waitFor();
    await upload.getByLabel('Or paste the CSV or the pain.002').fill(report);
    await upload.getByRole('button', { name: 'Apply the results' }).click();
    await page.locator('.components-notice').getByText(`Batch #${batchId} is finished: 3 payout(s) closed now, 2 paid, 1 failed, 0 pending.`).waitFor();
    await screenshot(page, `payout-batch-sepa-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect((await d.api('GET', `/payouts/${eve.payout.id}`)).body).toMatchObject({
      status: 'cancelled',
      reason: 'AC04 (closed account): Konto erloschen & aufgeloest',
    });
    expect((await d.ctx.ledger.balanceOf(eve.u.id, 'EUR')).available).toBe('100.00');
    expect((await d.ctx.ledger.balanceOf(dan.u.id, 'EUR')).available).toBe('60.00');
    expect(await d.ctx.ledger.verify()).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
