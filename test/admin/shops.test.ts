// The shops screens in a real browser: sync a custom network's advertisers feed (served on
// 127.0.0.1) as a job and watch it finish, then make the missing pages as a bulk job, see the
// catalog's views row count what was synced, and open one shop to set its cashback override and
// make a member's tracking link.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FixtureServer, json, type Rec } from '../fixtures/networks/common.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';
import { launchBrowser, openPage, screenshot, seriousViolations, signInWithKeyboard } from '../helpers/browser.js';
import { describeDaemon } from '../helpers/daemon.js';

let browser: Browser;
let feed: FixtureServer;
let provider: OpenAiFixture;
const programs: Rec[] = [
  { id: 701, name: 'Example Tea', url: 'https://www.tea.test/', state: 'joined' },
  { id: 702, name: 'Example Coffee', url: 'https://www.coffee.test/', state: 'joined' },
  { id: 703, name: 'Paused Shop', url: 'https://www.paused.test/', state: 'paused' },
];
beforeAll(async () => {
  browser = await launchBrowser();
  provider = await startOpenAiFixture();
  feed = await FixtureServer.start((req) => (req.path === '/programs.json' ? json(200, { programs }) : json(404, { error: 'not found' })));
});
afterAll(async () => {
  await browser?.close();
  await feed?.close();
  await provider?.close();
});

describeDaemon('the admin screens: shops', (use, dialect) => {
  it('syncs a network and makes the missing pages as jobs followed to the end, and shows the catalog by status', async () => {
    const d = use();
    const created = await d.api('POST', '/networks/teanet', {
      name: 'Tea Net',
      currency: 'EUR',
      tracking_link: 'https://go.teanet.test/c/{advertiser_id}?sub={sub_id}&u={url}',
      statuses: { open: 'pending', ok: 'approved', no: 'declined' },
      feeds: {
        advertisers: {
          url: `${feed.url}/programs.json`,
          format: 'json',
          items: 'programs',
          fields: { id: 'id', name: 'name', site_url: 'url', status: 'state' },
          active_values: ['joined'],
        },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const member = await d.ctx.users.create({ login: 'tina', email: 'tina@example.com', role: 'member' });

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Shops' }).click();
    await page.getByRole('heading', { level: 1, name: 'Shops' }).waitFor();

    await page.getByLabel('Network', { exact: true }).selectOption('teanet');
    await page.getByRole('button', { name: 'Sync advertisers' }).click();
    const sync = page.getByRole('progressbar', { name: /^Sync #\d+ \(teanet\) progress$/ });
    await sync.waitFor();
    await expect.poll(() => page.locator('.ct-job.is-done').count(), { timeout: 20_000 }).toBe(1);
    expect(await sync.getAttribute('aria-valuetext')).toBe('3 / 3');
    // The list is read again once the job ends: the views row counts what the sync stored.
    const views = page.getByRole('navigation', { name: 'Views' });
    await expect.poll(() => views.textContent()).toContain('All (3)');
    expect(await views.textContent()).toContain('Active (2)');
    expect(await views.textContent()).toContain('Inactive (1)');

    await page.getByRole('button', { name: 'Make missing pages' }).click();
    await expect.poll(() => page.locator('.ct-job.is-done').count(), { timeout: 20_000 }).toBe(2);
    const pages = page.locator('.ct-job').filter({ hasText: 'Bulk pages' });
    expect(await pages.textContent()).toContain('created2');
    await expect
      .poll(() => page.locator('.ct-aside').filter({ hasText: 'active shops have a page' }).textContent())
      .toContain('2 of 2 active shops have a page');

    await views.getByRole('link', { name: /Active/ }).click();
    await expect.poll(() => page.url()).toContain('status=active');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Example' }).count()).toBe(2);
    await screenshot(page, `shops-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // One shop: its cashback override and a member's tracking link.
    await page.getByRole('link', { name: 'Example Tea' }).click();
    await page.getByRole('heading', { level: 1, name: /Example Tea/ }).waitFor();
    await page.getByLabel('Override type').selectOption('percent_sale');
    await page.getByLabel('Value').fill('3');
    await page.getByRole('button', { name: 'Save override' }).click();
    await expect.poll(() => page.getByText('3% of the sale').count()).toBeGreaterThan(0);
    expect((await d.api('GET', '/advertisers/teanet/701')).body).toMatchObject({ cashback_rule: { type: 'percent_sale', value: '3', source: 'advertiser' } });
    await page.getByLabel('Member (id, login or email)').fill('tina');
    await page.getByRole('button', { name: 'Make the link' }).click();
    const link = page.getByLabel('Tracking link', { exact: true });
    await link.waitFor();
    expect(await link.inputValue()).toBe(`https://go.teanet.test/c/701?sub=${member.id}`);
    await screenshot(page, `shop-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('cancels a bulk run from its progress bar', async () => {
    const d = use();
    // With the runner held, the run stays queued, and a queued job is cancelled at once.
    await d.runner.stop();
    try {
      const { page, foreign, errors, context } = await openPage(browser, d.url);
      await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
      await page.goto(`${d.url}/admin/shops`);
      await page.getByRole('button', { name: 'Fetch missing logos' }).click();
      const job = page.locator('.ct-job').filter({ hasText: 'Bulk logos' });
      await job.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => job.getAttribute('class')).toContain('is-cancelled');
      expect(await job.getByRole('status').textContent()).toContain('Cancelled');
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      d.runner.start();
    }
  });

  it("writes AI content for a network's shops as a bulk job, and previews one shop's content before keeping it as shown", async () => {
    const d = use();
    await d.ctx.ai.configure({ base_url: provider.baseUrl, model: 'fixture-model', api_key: 'sk-admin-screens-1234' }, 'test');
    const now = new Date();
    for (const [id, name] of [
      ['9001', 'Alpha Books'],
      ['9002', 'Beta Games'],
    ])
      await d.ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, domain, status, last_seen_sync, created_at, updated_at) VALUES ('awin', ?, ?, ?, 'active', 1, ?, ?)",
        [id, name, `${name.split(' ')[0].toLowerCase()}.test`, now, now],
      );
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/shops?network=awin`);
    await page.getByLabel('Network', { exact: true }).selectOption('awin');
    await page.getByRole('button', { name: 'Write AI content' }).click();
    const run = page.locator('.ct-job').filter({ hasText: 'Bulk AI content' });
    await expect.poll(() => run.getAttribute('class'), { timeout: 20_000 }).toContain('is-done');
    expect(await run.textContent()).toContain('saved2');
    expect(await run.getByRole('progressbar').getAttribute('aria-valuetext')).toBe('2 / 2');

    await page.getByRole('link', { name: 'Alpha Books' }).click();
    await page.getByRole('heading', { level: 1, name: /Alpha Books/ }).waitFor();
    expect(await page.getByText(/Last generation: saved with fixture-model/).count()).toBe(1);
    const before = (await d.api('GET', '/advertisers/awin/9001')).body.description;
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    const proposal = page.getByRole('region', { name: 'Proposal' });
    await proposal.waitFor();
    expect(await proposal.textContent()).toContain('not saved');
    expect((await d.api('GET', '/advertisers/awin/9001')).body.description).toBe(before);
    const shown = await proposal.locator('p').first().textContent();
    const asked = provider.requests.length;
    await page.getByRole('button', { name: 'Keep this proposal' }).click();
    // (The notice is also spoken through a live region: the text is on the page twice.)
    await expect.poll(() => page.getByText(/^Saved: the description and the page body you previewed/).count()).toBeGreaterThan(0);
    // The text shown is the text kept, and the provider was not asked again.
    expect((await d.api('GET', '/advertisers/awin/9001')).body).toMatchObject({ description: shown, ai: { outcome: 'saved', model: 'fixture-model' } });
    expect(provider.requests.length).toBe(asked);
    await expect.poll(() => page.getByText(/^Last generation: saved/).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
