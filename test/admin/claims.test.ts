// The claims screens in a real browser, on a real daemon: a claim is filed from a member's page
// (keyboard only, one POST however often the button is clicked), the Claims list shows the status
// views with their counts, a claim's page shows its evidence (the receipt image among it) and
// matches the claim to an unmatched order, another is declined with its reason; Escape closes a
// modal and focus returns to the button that opened it.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';
import { image } from '../helpers/images.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function watchPosts(page: Page, path: RegExp): { key: string | undefined }[] {
  const posts: { key: string | undefined }[] = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && path.test(new URL(req.url()).pathname)) posts.push({ key: req.headers()['idempotency-key'] });
  });
  return posts;
}

describeDaemon('the admin screens: claims', (use, dialect) => {
  it('files a claim from a member page, lists claims by status, shows the evidence, matches one to an order and declines another', async () => {
    const d = use();
    await d.ctx.networks.saveCustom('shopnet', shopnetDefinition({ name: 'Shop Net' }), 'test');
    await addAdvertiser(d.ctx, 'shopnet', 'shop-1');
    const erin = await d.ctx.users.create({ login: 'erin', email: 'erin@example.com', display_name: 'Erin Member', role: 'member' });
    const link = await d.ctx.advertisers.trackingLink('shopnet', 'shop-1', { member: String(erin.id) });
    const clickId = new URL(await d.ctx.clicks.go(link.go_token!, { ip: '203.0.113.9', userAgent: 'Browser test' })).searchParams.get('subid')!;
    const withReceipt = await d.api('POST', '/claims', {
      click_id: clickId,
      member_id: erin.id,
      network: 'shopnet',
      advertiser: 'shop-1',
      order_ref: 'R-100',
      purchased_at: '2026-11-19T09:00:00Z',
      amount: '42.00',
      currency: 'EUR',
      receipt: (await image('png', 120, 90)).toString('base64'),
    });
    expect(withReceipt.status).toBe(201);
    const orphan = await d.ctx.orders.record(
      {
        network: 'shopnet',
        transaction_id: 'X-77',
        advertiser: 'shop-1',
        merchant_ref: 'OTHER-REF',
        sale_amount: '300.00',
        commission: '30.00',
        currency: 'EUR',
        source: 'poll',
      },
      'poll',
    );
    expect(orphan.member).toBeNull();

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/members/${erin.id}`);
    await page.getByRole('heading', { level: 1, name: 'Erin Member' }).waitFor();
    // Escape closes the modal, and focus returns to the button that opened it.
    const fileButton = page.getByRole('button', { name: 'File a claim' });
    await fileButton.click();
    const modal = page.getByRole('dialog', { name: 'File a claim for Erin Member' });
    await modal.waitFor();
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'detached' });
    await expect.poll(() => fileButton.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);

    const posts = watchPosts(page, /\/claims$/);
    await page.keyboard.press('Enter');
    await modal.waitFor();
    await modal.getByRole('combobox', { name: 'Network' }).selectOption('shopnet');
    await modal.getByLabel("Shop (the network's advertiser id, required)").fill('shop-1');
    await modal.getByLabel("Shop's order reference (required)").fill('R-200');
    await modal.getByLabel('Purchased (required)').fill('2026-11-20T10:30');
    await modal.getByLabel('Amount paid (required)').fill('55.90');
    await modal.getByLabel('Currency').fill('EUR');
    await modal.getByLabel('Note').fill('Bought a lamp, nothing tracked');
    await screenshot(page, `claims-file-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await modal.getByRole('button', { name: 'File the claim' }).dblclick();
    await page
      .locator('.components-notice')
      .getByText(/Filed: claim #\d+ is open \(Shop Net has no claim channel/)
      .waitFor();
    expect(posts).toHaveLength(1);
    const filed = await d.api('GET', `/claims?member_id=${erin.id}&search=R-200`);
    expect(filed.body).toMatchObject([{ order_ref: 'R-200', amount: '55.90', currency: 'EUR', status: 'open', note: 'Bought a lamp, nothing tracked' }]);
    const second = (filed.body as { id: number }[])[0];

    // The list: status views with counts.
    await page.getByRole('link', { name: 'Claims' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Claims' }).waitFor();
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(async () => views.textContent()).toContain('Open (2)');
    await screenshot(page, `claims-list-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // A claim's page: the evidence, the receipt image, the match to an order.
    await page.getByRole('link', { name: `#${withReceipt.body.id}`, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `Claim #${withReceipt.body.id}` }).waitFor();
    const img = page.getByRole('img', { name: `Receipt of claim ${withReceipt.body.id} for order R-100` });
    await img.waitFor();
    expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(120);
    // The click is the evidence: when, and the rate shown then.
    await page.getByText(new RegExp(`rate shown 50% of commission \\(click ${clickId}\\)`)).waitFor();
    await screenshot(page, `claim-page-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Match to an order' }).click();
    const match = page.getByRole('dialog', { name: `Match claim #${withReceipt.body.id} to an order` });
    await match.getByLabel('Order number (required)').fill(String(orphan.id));
    expect(await seriousViolations(page)).toEqual([]);
    await match.getByRole('button', { name: 'Match' }).click();
    await page.locator('.components-notice').getByText(`Claim #${withReceipt.body.id} is matched to order #${orphan.id}.`).waitFor();
    expect((await d.api('GET', `/orders/${orphan.id}`)).body.member).toMatchObject({ id: erin.id });

    // The other one: declined with its reason.
    await page.goto(`${d.url}/admin/claims/${second.id}`);
    await page.getByRole('button', { name: 'Decline' }).click();
    const decline = page.getByRole('dialog', { name: `Decline claim #${second.id}` });
    const submit = decline.getByRole('button', { name: 'Decline the claim' });
    expect(await submit.isDisabled()).toBe(true);
    await decline.getByLabel('Reason (required)').fill('Bought in the shop, not online');
    await submit.click();
    await page.locator('.components-notice').getByText(`Claim #${second.id} is declined.`).waitFor();
    expect((await d.api('GET', `/claims/${second.id}`)).body).toMatchObject({ status: 'declined', reason: 'Bought in the shop, not online' });
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
