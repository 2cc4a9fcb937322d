// The networks screens in a real browser: define a custom network in the editor (its validation
// errors shown by field first), switch its postbacks on (the secret shown once), send a test
// postback and read what was sent and answered, see it among the recent postbacks, and open and
// close the rotation modal with the keyboard.
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

const definition = (trackingLink: string) => ({
  name: 'Shop Net',
  currency: 'EUR',
  tracking_link: trackingLink,
  statuses: { open: 'pending', confirmed: 'approved', cancelled: 'declined' },
  postback: { params: { transaction_id: 'tid', status: 'state', sale_amount: 'sale', commission: 'payout', sub_id: 'aff_sub' } },
});

describeDaemon('the admin screens: networks', (use, dialect) => {
  it('defines a custom network, switches its postbacks on, sends a test postback and shows what was answered', async () => {
    const d = use();
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Networks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
    // The built-in networks are listed with their state.
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'awin' }).count()).toBe(1);

    await page.getByLabel('New custom network id').fill('shopnet');
    await page.getByRole('button', { name: 'Add a custom network' }).click();
    await page.getByRole('heading', { level: 1, name: 'New custom network: shopnet' }).waitFor();
    // A definition the API refuses: its error is shown at the field it names, and nothing is stored.
    const editor = page.getByLabel('Definition (JSON)');
    await editor.fill(JSON.stringify(definition('https://go.shopnet.test/c?aff=77'), null, 2));
    await page.getByRole('button', { name: 'Create network' }).click();
    const fieldErrors = page.getByRole('list', { name: 'Errors in the definition' });
    await expect.poll(() => fieldErrors.textContent()).toContain('tracking_link');
    expect(await fieldErrors.textContent()).toContain('{sub_id}');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect((await d.api('GET', '/networks/shopnet')).status).toBe(404);
    await editor.fill(JSON.stringify(definition('https://go.shopnet.test/c?aff=77&subid={sub_id}'), null, 2));
    await page.getByRole('button', { name: 'Create network' }).click();
    await page.getByRole('heading', { level: 1, name: 'Shop Net (shopnet)' }).waitFor();
    expect((await d.api('GET', '/networks/shopnet')).body).toMatchObject({ kind: 'custom', definition: { statuses: { confirmed: 'approved' } } });

    // Switching postbacks on makes the secret, shown once.
    await page.getByLabel('Accept postbacks from this network').click();
    const secret = page.getByLabel('Postback secret, shown once');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.getByLabel('Postback URL to give the network').inputValue()).toContain(`${d.url}/postback/shopnet?token=`);
    expect((await d.api('GET', '/networks/shopnet')).body).toMatchObject({ postbacks: { enabled: true, secret_set: true } });

    // The test postback: what was sent, what was answered, what was stored.
    await page.getByLabel('Status', { exact: true }).selectOption('approved');
    await page.getByRole('button', { name: 'Send a test postback' }).click();
    const answer = page.getByRole('region', { name: 'Test postback result' });
    await answer.waitFor();
    expect(await answer.textContent()).toContain(`GET ${d.url}/postback/shopnet?`);
    expect(await answer.textContent()).toContain('state=confirmed');
    expect(await answer.textContent()).toContain('Answered 200');
    expect(await answer.textContent()).toMatch(/Stored as postback #\d+: accepted/);
    // It is among the recent postbacks, counted in the views row by outcome.
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('Accepted (1)');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'svc_postback_test' }).count()).toBe(1);

    // Rotation opens in a modal; Escape closes it and focus returns to its button.
    const rotate = page.getByRole('button', { name: 'Rotate the secret…' });
    await rotate.click();
    await page.getByRole('dialog', { name: 'New postback secret for shopnet' }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => rotate.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);

    await screenshot(page, `networks-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('disables a network from the list after a confirmation that says what stops, and enables it again', async () => {
    const d = use();
    expect((await d.api('POST', '/networks/offnet', definition('https://go.test/c?s={sub_id}'))).status).toBe(201);
    expect((await d.api('POST', '/networks/offnet/postback', { enabled: true })).status).toBe(200);
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/networks?kind=custom`);
    const row = page.getByRole('row').filter({ hasText: 'offnet' });
    await row.waitFor();
    await row.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Disable' }).click();
    const modal = page.getByRole('dialog', { name: 'Disable Shop Net (offnet)?' });
    const text = await modal.textContent();
    expect(text).toContain('scheduled syncs, polls and coupon refreshes');
    expect(text).toContain('tracking links');
    expect(text).toContain('does not stop a sync or poll already running');
    expect(text).toContain('they are on and keep arriving');
    expect(await seriousViolations(page)).toEqual([]);
    // Cancel changes nothing, and focus is back on the row's Actions button.
    await modal.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label'))).toBe('Actions');
    expect((await d.api('GET', '/networks/offnet')).body).toMatchObject({ enabled: true });
    await row.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Disable' }).click();
    await modal.getByRole('button', { name: 'Disable the network' }).click();
    await page.locator('.components-notice').getByText('Shop Net (offnet) is disabled.').waitFor();
    expect((await d.api('GET', '/networks/offnet')).body).toMatchObject({ enabled: false, postbacks: { enabled: true } });
    await expect.poll(() => row.textContent()).toMatch(/offnet.*no/);
    await row.getByRole('button', { name: 'Actions' }).click();
    await page.getByRole('menuitem', { name: 'Enable' }).click();
    await page.getByRole('dialog', { name: 'Enable Shop Net (offnet)?' }).getByRole('button', { name: 'Enable the network' }).click();
    await page.locator('.components-notice').getByText('Shop Net (offnet) is enabled.').waitFor();
    expect((await d.api('GET', '/networks/offnet')).body).toMatchObject({ enabled: true });
    await screenshot(page, `networks-switch-${dialect}`);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('configures settings with the secret one write-only, rotates the secret in a modal and shows the new one once', async () => {
    const d = use();
    const settings = [
      { name: 'account', description: 'Account number', required: true },
      { name: 'api_key', description: 'Feed key', secret: true, required: true },
    ];
    expect((await d.api('POST', '/networks/rotnet', { ...definition('https://go.test/c?s={sub_id}'), settings })).status).toBe(201);
    const first = (await d.api('POST', '/networks/rotnet/postback', { enabled: true })).body.secret as string;
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/networks/rotnet`);
    // Settings: the plain one edited in place; the secret one only said to be set, and replaceable.
    await page.getByLabel('account (required)').fill('A-77');
    await page.getByLabel('api_key (required): not set').fill('feed-key-SECRET-1234');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const secretField = page.getByLabel('api_key (required): set');
    await secretField.waitFor();
    expect(await secretField.inputValue()).toBe('');
    expect(await page.content()).not.toContain('feed-key-SECRET-1234');
    expect((await d.api('GET', '/networks/rotnet')).body).toMatchObject({ configured: true, settings: { account: 'A-77', api_key_set: true } });
    expect(await d.ctx.networks.settings('rotnet')).toMatchObject({ account: 'A-77', api_key: 'feed-key-SECRET-1234' });
    await page.getByRole('button', { name: 'Rotate the secret…' }).click();
    const dialog = page.getByRole('dialog', { name: 'New postback secret for rotnet' });
    await dialog.getByRole('button', { name: 'Make a new secret' }).dblclick();
    const secret = page.getByLabel('Postback secret, shown once');
    await secret.waitFor();
    const second = await secret.inputValue();
    expect(second).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    const sale = (token: string, tid: string) => new URLSearchParams({ token, tid, state: 'open', sale: '10.00', payout: '1.00', test: '1' }).toString();
    expect((await d.postback('rotnet', { query: sale(first, 'R-1') })).status).toBe(401);
    expect((await d.postback('rotnet', { query: sale(second, 'R-2') })).status).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
