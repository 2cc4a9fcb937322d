// The content screens in a real browser, on a real daemon: a coupon edited, rewritten by the AI
// (the fixture provider) after its preview, and reverted; the log showing an entry the API wrote,
// its detail and the live tail; a schedule run now and its job on the jobs screen; pages,
// webhooks and settings doing their task. No foreign request, no console error, no serious
// accessibility fault on any of them.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';
import { insertCoupon } from '../helpers/coupons.js';
import { addShop } from '../helpers/pages.js';
import { startReceiver } from '../helpers/receiver.js';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';

let browser: Browser;
let fixture: OpenAiFixture;
beforeAll(async () => {
  browser = await launchBrowser();
  fixture = await startOpenAiFixture();
});
afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

const PASSWORD = 'correct horse battery';

/** A notice on the screen (not its copy in the screen reader's live region). */
function notice(page: Page, text: string | RegExp) {
  return page.locator('.components-notice').getByText(text);
}

/** axe once the page is still: a modal fading in would be measured half transparent. */
async function violations(page: Page): Promise<string[]> {
  await page.waitForFunction(() => (globalThis as any).document.getAnimations().every((a: any) => a.playState !== 'running'));
  return seriousViolations(page);
}

async function menu(page: Page, label: string, heading: string | RegExp = label): Promise<void> {
  await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: label, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

describeDaemon('the admin screens: content, log, jobs, schedules, webhooks, settings', (use, dialect) => {
  it('edits a coupon, previews its AI rewrite, keeps it and reverts it', async () => {
    const d = use();
    fixture.reset();
    const configured = await d.api('POST', '/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-admin-screens-1' });
    expect(configured.status).toBe(200);
    const id = await insertCoupon(d.ctx, { title: 'Ten percent off', description: 'On everything' });
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
    await menu(page, 'Coupons');
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('Active (1)');
    await screenshot(page, `coupons-${dialect}`);
    expect(await violations(page)).toEqual([]);

    // Edit: the description becomes the administrator's.
    await page.getByRole('link', { name: 'Ten percent off' }).click();
    await page.getByRole('heading', { level: 1, name: `Edit coupon #${id}` }).waitFor();
    await page.getByLabel('Description').fill('Ten percent off everything, this week only');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await notice(page, 'Coupon saved.').waitFor();
    expect((await d.api('GET', `/coupons/${id}`)).body).toMatchObject({
      edited_fields: ['description'],
      description: 'Ten percent off everything, this week only',
    });
    expect(await violations(page)).toEqual([]);

    // Every field the API edits is here; a value it refuses is explained at its field.
    await page.getByLabel('Discount currency').fill('EURO');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page
      .locator('.ct-field-error')
      .filter({ hasText: /ISO 4217/ })
      .waitFor();
    await expect.poll(() => page.getByLabel('Discount currency').getAttribute('aria-describedby')).toBeTruthy();
    expect(await violations(page)).toEqual([]);
    await page.getByLabel('Discount type').selectOption('amount');
    await page.getByLabel('Discount value').fill('5.50');
    await page.getByLabel('Discount currency').fill('eur');
    await page.getByLabel('Ends').fill('2031-12-31T23:30');
    await page.getByLabel('Regions').fill('de, fr');
    await page.getByLabel('Exclusive to this site').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await notice(page, 'Coupon saved.').waitFor();
    const fields = (await d.api('GET', `/coupons/${id}`)).body;
    expect(fields).toMatchObject({ discount: { type: 'amount', value: '5.50', currency: 'EUR' }, exclusive: true, regions: ['DE', 'FR'] });
    expect(Date.parse(fields.ends_at)).toBe(await page.evaluate(() => new Date('2031-12-31T23:30').getTime()));

    // The AI's proposal is shown first, and nothing is saved until it is kept.
    await page.getByRole('button', { name: 'Rewrite with AI…' }).click();
    const dialog = page.getByRole('dialog', { name: `AI rewrite of coupon #${id}` });
    const proposal = dialog.getByRole('region', { name: 'AI proposal' });
    await expect.poll(() => proposal.textContent()).toMatch(/Save more at/);
    expect(await violations(page)).toEqual([]);
    await screenshot(page, `coupon-ai-preview-${dialect}`);
    expect((await d.api('GET', `/coupons/${id}`)).body).toMatchObject({ title: 'Ten percent off', ai_fields: [] });
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await notice(page, 'The AI rewrite is saved.').waitFor();
    await expect.poll(() => page.getByLabel('Title (written by the AI)').inputValue()).toMatch(/^Save more at/);
    expect((await d.api('GET', `/coupons/${id}`)).body).toMatchObject({ ai_fields: ['title', 'description'], original: { title: 'Ten percent off' } });
    // Kept as previewed: the provider was asked once, for the preview.
    expect(fixture.requests.length).toBe(1);

    // Revert: the title goes back to the network's, the description to the administrator's edit.
    await page.getByRole('button', { name: 'Revert the AI rewrite…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revert the AI rewrite?' });
    await confirm.getByRole('button', { name: 'Revert' }).click();
    await notice(page, 'The text from before the AI rewrite is back.').waitFor();
    expect(await page.getByLabel(/^Title/).inputValue()).toBe('Ten percent off');
    expect(await page.getByLabel(/^Description/).inputValue()).toBe('Ten percent off everything, this week only');
    expect((await d.api('GET', `/coupons/${id}`)).body).toMatchObject({ ai_fields: [], original: null });
    await expect.poll(() => page.getByRole('button', { name: 'Revert the AI rewrite…' }).isDisabled()).toBe(true);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a log entry the API wrote, its detail, and new entries while Live is on', async () => {
    const d = use();
    // A refused sign-in through the API writes a warning (source auth) with the login in its context.
    const refuse = (login: string) =>
      fetch(`${d.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login, password: 'not it at all' }) });
    expect((await refuse('log-screen-visitor')).status).toBeGreaterThanOrEqual(400);
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
    await menu(page, 'Log');
    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: /^Warning/ })
      .click();
    await expect.poll(() => page.url()).toContain('level=warning');
    const row = page.getByRole('row').filter({ hasText: 'Authentication failed' }).first();
    await row.waitFor();
    await screenshot(page, `log-${dialect}`);
    expect(await violations(page)).toEqual([]);
    await row.getByRole('button', { name: 'Details' }).click();
    const detail = page.getByRole('dialog', { name: /^Log entry #/ });
    await expect.poll(() => detail.textContent()).toContain('log-screen-visitor');
    expect(await violations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });

    // Live: a new entry appears without a reload.
    await page.getByLabel('Live').check();
    await page.getByText('Following the log…').waitFor();
    const before = await page.getByRole('row').filter({ hasText: 'Authentication failed' }).count();
    await refuse('log-screen-second-visitor');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Authentication failed' }).count(), { timeout: 15_000 }).toBe(before + 1);
    await page.getByText(/1 new entry/).waitFor();

    // A link to one entry (as the overview's latest errors give) opens its detail.
    const [newest] = (await d.api('GET', '/logs?source=auth&level=warning&per_page=1')).body;
    await page.goto(`${d.url}/admin/log/${newest.id}`);
    const linked = page.getByRole('dialog', { name: `Log entry #${newest.id}` });
    await expect.poll(() => linked.textContent()).toContain('log-screen-second-visitor');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('runs a schedule now and follows its job on the jobs screen', async () => {
    const d = use();
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
    await menu(page, 'Schedules');
    await page.getByRole('row', { name: /maintenance_prune/ }).waitFor();
    expect(await violations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Run now maintenance_prune' }).click();
    const told = notice(page, /maintenance_prune: queued job #(\d+)/);
    await told.waitFor();
    const jobId = Number(/#(\d+)/.exec((await told.textContent()) ?? '')?.[1]);
    await screenshot(page, `schedules-${dialect}`);
    await d.finished({ id: jobId });
    await menu(page, 'Jobs');
    await page.getByRole('row').filter({ hasText: 'maintenance.prune' }).filter({ hasText: 'done' }).first().waitFor();
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).textContent()).toMatch(/Done \([1-9]/);
    await screenshot(page, `jobs-${dialect}`);
    expect(await violations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('cancels a queued job from the jobs screen', async () => {
    const d = use();
    // A job type no runner here takes stays queued until cancelled.
    await d.runner.stop();
    try {
      const job = await d.ctx.jobs.enqueue('maintenance.prune', {}, 'test');
      const { page, foreign, errors, context } = await openPage(browser, d.url);
      await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
      await menu(page, 'Jobs');
      const row = page.getByRole('row').filter({ hasText: `#${job.id}` });
      await row.filter({ hasText: 'waiting for a runner' }).waitFor();
      await row.getByRole('button', { name: 'Actions' }).click();
      await page.getByRole('menuitem', { name: 'Cancel' }).click();
      await page
        .getByRole('dialog', { name: `Cancel job #${job.id}?` })
        .getByRole('button', { name: 'Cancel the job' })
        .click();
      await row.filter({ hasText: 'cancelled' }).waitFor();
      expect((await d.api('GET', `/jobs/${job.id}`)).body).toMatchObject({ status: 'cancelled' });
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      d.runner.start();
    }
  });
  it('edits a shop page and keeps the AI content it previewed', async () => {
    const d = use();
    fixture.reset();
    await d.api('POST', '/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-admin-screens-1' });
    await addShop(d.ctx, 'awin', '2001', { name: 'Example Shoes' });
    const made = await d.api('POST', '/advertisers/awin/2001/page', { status: 'draft' });
    expect(made.status).toBe(201);
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
    await menu(page, 'Pages');
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).textContent()).toMatch(/Draft \([1-9]/);
    expect(await violations(page)).toEqual([]);
    await page.getByRole('link', { name: made.body.title }).click();
    await page.getByRole('heading', { level: 1, name: `Edit page #${made.body.id}` }).waitFor();
    await page.getByLabel('Title').fill('Example Shoes: cashback on every pair');
    await page.getByLabel('Body (HTML, sanitised when saved)').fill('<p>Hello <script>alert(1)</script>shoppers</p>');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await notice(page, /Page saved/).waitFor();
    const stored = (await d.api('GET', `/pages/${made.body.id}`)).body;
    expect(stored).toMatchObject({ title: 'Example Shoes: cashback on every pair' });
    expect(stored.body).not.toContain('script');
    expect(await violations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Write with AI…' }).click();
    const dialog = page.getByRole('dialog', { name: /^AI content for/ });
    await expect.poll(() => dialog.getByRole('region', { name: 'Proposed page body' }).textContent()).toContain('Cashback on every order');
    expect(await violations(page)).toEqual([]);
    await screenshot(page, `page-ai-preview-${dialect}`);
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await notice(page, 'The AI content is saved.').waitFor();
    await expect.poll(() => page.getByRole('region', { name: 'Stored body, as visitors see it' }).textContent()).toContain('Cashback on every order');
    expect(fixture.requests.length).toBe(1);

    // Revert, with a confirmation: the body saved before the AI wrote comes back (Escape first closes the dialog, focus back on its button).
    const revert = page.getByRole('button', { name: 'Revert the AI content…' });
    await revert.click();
    const confirm = page.getByRole('dialog', { name: 'Revert the AI content?' });
    await confirm.waitFor();
    expect(await violations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await expect.poll(() => revert.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await confirm.getByRole('button', { name: 'Revert' }).click();
    await notice(page, /from before the AI wrote them are back/).waitFor();
    expect((await d.api('GET', `/pages/${made.body.id}`)).body).toMatchObject({ body: stored.body, original: null });
    await expect.poll(() => revert.isDisabled()).toBe(true);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('adds a webhook subscription, shows its secret once, pings it and redelivers the ping', async () => {
    const d = use();
    const receiver = await startReceiver();
    try {
      const { page, foreign, errors, context } = await openPage(browser, d.url);
      await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
      await menu(page, 'Webhooks');
      await page.getByRole('button', { name: 'Add a subscription' }).click();
      const form = page.getByRole('dialog', { name: 'Add a subscription' });
      await form.getByLabel('Receiver URL').fill(receiver.url);
      await form.getByLabel('job.finished').check();
      await form.getByLabel('Description').fill('Screens test');
      expect(await violations(page)).toEqual([]);
      await form.getByRole('button', { name: 'Add subscription' }).click();
      await notice(page, /shown this once/).waitFor();
      expect(await page.locator('.ct-secret').textContent()).toMatch(/^whsec_/);
      const row = page.getByRole('row').filter({ hasText: receiver.url });
      await row.waitFor();
      expect(await violations(page)).toEqual([]);
      await screenshot(page, `webhooks-${dialect}`);
      await row.getByRole('link', { name: receiver.url }).click();
      await page.getByRole('heading', { level: 1, name: /^Webhook #/ }).waitFor();
      await page.getByRole('button', { name: 'Send a test ping' }).click();
      await notice(page, /\(ping\) delivered/).waitFor();
      const delivery = page.getByRole('row').filter({ hasText: 'ping' });
      await delivery.waitFor();
      expect(await violations(page)).toEqual([]);
      await delivery.getByRole('button', { name: 'Redeliver' }).click();
      await expect.poll(() => receiver.received.length).toBe(2);
      await notice(page, /\(ping\) delivered/).waitFor();
      expect(receiver.received[0]!.headers['webhook-id']).toBe(receiver.received[1]!.headers['webhook-id']);
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await receiver.close();
    }
  });

  it('replaces the AI key without ever showing it, and shows the spend of the day', async () => {
    const d = use();
    await d.api('POST', '/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-admin-screens-1' });
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', PASSWORD);
    await menu(page, 'Settings');
    await page.getByText('API key:').waitFor();
    expect(await page.getByText('API key:').textContent()).toContain('set');
    await page.getByRole('heading', { name: 'AI spend today' }).waitFor();
    expect(await violations(page)).toEqual([]);
    await screenshot(page, `settings-${dialect}`);
    await page.getByRole('button', { name: 'Replace the key' }).click();
    await page.getByLabel('New API key').fill('sk-replaced-in-the-screen-2');
    await page.getByLabel('Model').fill('fixture-model-2');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await notice(page, 'Settings saved.').waitFor();
    expect(await page.content()).not.toContain('sk-replaced-in-the-screen-2');
    expect((await d.api('GET', '/ai/settings')).body).toMatchObject({ api_key_set: true, model: 'fixture-model-2' });
    expect(await d.ctx.ai.provider().then((p) => p.settings.api_key)).toBe('sk-replaced-in-the-screen-2');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
