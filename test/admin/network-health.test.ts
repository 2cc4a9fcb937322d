// The network page's health panel and the overview's stalled-networks line in a real browser: a
// network refusing its credentials is stalled once the watchdog checks it, the panel says why and
// when, the overview lists it with a link to its page; a network never checked says so.
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

const definition = (name: string) => ({
  name,
  currency: 'EUR',
  tracking_link: 'https://go.test/c?s={sub_id}',
  statuses: { open: 'pending', confirmed: 'approved', cancelled: 'declined' },
  postback: { params: { transaction_id: 'tid', status: 'state', commission: 'payout', sub_id: 'aff_sub' } },
});

describeDaemon('the admin screens: network health', (use, dialect) => {
  it('shows a stalled network on its page and on the overview, and a network not checked yet as unknown', async () => {
    const d = use();
    expect((await d.api('POST', '/networks/locknet', definition('Lock Net'))).status).toBe(201);
    for (let i = 0; i < 3; i++) await d.ctx.networks.recordRun('locknet', 'orders', { pages: 0 }, 'refused', 'svc_network_unauthorized');
    await d.ctx.watchdog.check('test');
    // Made after the check: the watchdog has not seen it yet.
    expect((await d.api('POST', '/networks/newnet', definition('New Net'))).status).toBe(201);

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    // The overview's "Needs attention" names the stalled network and links to its page.
    const line = page.locator('.ct-stalled-networks');
    await expect.poll(() => line.textContent()).toMatch(/^1 stalled networks: locknet since \d{4}-/);
    await line.getByRole('link', { name: 'locknet' }).click();
    await page.getByRole('heading', { level: 1, name: 'Lock Net (locknet)' }).waitFor();

    const panel = page.locator('.ct-network-health');
    await expect.poll(() => panel.textContent()).toContain('Stalled since');
    const text = await panel.textContent();
    expect(text).toContain('Order poll: the network refused the credentials 3 times in a row');
    expect(text).toContain('(3 refused logins in a row)');
    expect(text).toMatch(/Last alarm\d{4}-\d\d-\d\dT[\d:.]+Z: Order poll/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `network-health-${dialect}`);

    await page.goto(`${d.url}/admin/networks/newnet`);
    await page.getByRole('heading', { level: 1, name: 'New Net (newnet)' }).waitFor();
    await expect.poll(() => page.locator('.ct-network-health').textContent()).toContain('Unknown (not checked yet)');
    expect(await page.locator('.ct-network-health').textContent()).toContain('Last alarmnone');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
