// A member's data requests in a real browser: "Export data" downloads the member's JSON document,
// "Erase member" states what is kept and removed, is refused in words while the member has a
// balance, and then offers the forced erasure, which needs a note.
import { readFile } from 'node:fs/promises';
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

describeDaemon("the admin screens: a member's data", (use, dialect) => {
  it('downloads the export, refuses the erasure while a balance is left, and erases with force and a note', async () => {
    const d = use();
    const dora = await d.ctx.users.create({ login: 'dora', email: 'dora@example.com', display_name: 'Dora Explorer', role: 'member' });
    await d.ctx.ledger.adjust({ member_id: dora.id, type: 'credit', amount: '5.00', currency: 'EUR', note: 'Welcome bonus' }, 'test');

    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/members/${dora.id}`);
    await page.getByRole('heading', { level: 1, name: 'Dora Explorer' }).waitFor();

    // Export data: the browser saves the API's document under its file name.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export data' }).click()]);
    expect(download.suggestedFilename()).toBe(`member-${dora.id}-data.json`);
    const doc = JSON.parse(await readFile((await download.path())!, 'utf8'));
    expect(doc.member).toMatchObject({ id: dora.id, login: 'dora', email: 'dora@example.com' });
    expect(doc.ledger_entries).toHaveLength(1);
    await page.getByRole('main').getByText(`Exported: member-${dora.id}-data.json.`).waitFor();

    // Erase: the confirmation says what is kept and removed; refused for the balance, in words.
    await page.getByRole('button', { name: 'Erase member' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/Kept:/).waitFor();
    expect(await dialog.textContent()).toContain('Removed:');
    expect(await dialog.getByRole('checkbox').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Erase member' }).click();
    await dialog.getByText(/still has a positive balance/).waitFor();
    expect((await d.ctx.users.get(dora.id))!.login).toBe('dora');
    await screenshot(page, `member-erase-refused-${dialect}`);

    // Force: the note is required before the button works.
    await dialog.getByRole('checkbox', { name: /Force/ }).check();
    const force = dialog.getByRole('button', { name: 'Force erasure' });
    expect(await force.isDisabled()).toBe(true);
    await dialog.getByLabel('Note (required)').fill('Request #12 by e-mail');
    await force.click();
    await page.getByRole('main').getByText(`Member erased: now erased-${dora.id} (5.00 EUR written off).`).waitFor();
    expect(await dialog.count()).toBe(0);
    await page.getByRole('heading', { level: 1, name: `erased-${dora.id}` }).waitFor();

    const user = await d.ctx.users.get(dora.id);
    expect(user).toMatchObject({ login: `erased-${dora.id}`, email: `erased-${dora.id}@invalid`, status: 'disabled' });
    expect((await d.ctx.ledger.balanceOf(dora.id, 'EUR')).available).toBe('0.00');
    expect(await d.ctx.ledger.verify()).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
    // A browser on a shared machine: the timeout is generous, the steps wait for what they need.
  }, 90_000);
});
