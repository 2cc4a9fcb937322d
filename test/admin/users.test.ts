// Users, application passwords and referrals in a real browser: add a user from the Users screen,
// give them an application password that is shown once, use it with a plain HTTP request, revoke
// it (the next request is 401); on a member's page set a referrer with the member picker, read a
// refusal in words, and end the referral after its confirmation. axe on every screen and modal;
// the keyboard opens and closes the modals and focus returns.
import type { Browser, Page } from 'playwright-core';
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

const focusedText = (page: Page) => page.evaluate(() => (globalThis as any).document.activeElement?.textContent as string | undefined);

describeDaemon('the admin screens: users, application passwords and referrals', (use, dialect) => {
  it('adds a user, shows their new application password once, and a revoked one is refused on the next request', async () => {
    const d = use();
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await expect.poll(() => page.getByRole('navigation', { name: 'Views' }).textContent()).toContain('Administrator (1)');
    expect(await seriousViolations(page)).toEqual([]);

    // The keyboard opens "Add user"; Escape closes it and focus is back on the button.
    await page.getByRole('button', { name: 'Add user' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Login (required)').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => focusedText(page)).toBe('Add user');

    await page.keyboard.press('Enter');
    await dialog.getByLabel('Login (required)').fill('scripty');
    await dialog.getByLabel('Email (required)').fill('scripty@example.com');
    await dialog.getByLabel('Display name').fill('Scripty McScript');
    await dialog.getByLabel('Email (required)').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Scripty McScript' }).waitFor();
    const user = (await d.api('GET', '/users?search=scripty')).body[0];
    expect(user).toMatchObject({ login: 'scripty', email: 'scripty@example.com', role: 'member' });
    expect(page.url()).toContain(`/admin/users/${user.id}`);

    // A new application password, shown once with a copy button and the words that say so.
    await page.getByLabel('New application password name').fill('Nightly report');
    await page.getByRole('button', { name: 'Add application password' }).click();
    await page.getByRole('main').getByText('This is the only time it is shown.').waitFor();
    const password = (await page.locator('.ct-new-password code').textContent()) ?? '';
    expect(password).toMatch(/^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/);
    expect(await page.getByRole('button', { name: 'Copy' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Nightly report' }).count()).toBe(1);
    await screenshot(page, `user-${dialect}`);
    expect(await seriousViolations(page)).toEqual([]);

    // A plain HTTP request with it works.
    const request = () =>
      fetch(`${d.url}/wp-json/svc/v1/users/me/application-passwords`, {
        headers: { authorization: `Basic ${Buffer.from(`scripty:${password}`).toString('base64')}` },
      });
    const used = await request();
    expect(used.status).toBe(200);
    expect(((await used.json()) as { name: string }[]).map((i) => i.name)).toEqual(['Nightly report']);

    // Never shown again: a reload has the row, not the password.
    await page.reload();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Nightly report' }).count()).toBe(1);
    expect(await page.content()).not.toContain(password);

    // Revoke: the confirmation first (Escape backs out, focus returns), then the next request is 401.
    const revoke = page.getByRole('button', { name: 'Revoke Nightly report' });
    await revoke.focus();
    await page.keyboard.press('Enter');
    await dialog.getByText(/will be refused from their next request/).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => focusedText(page)).toBe('Revoke');
    expect((await request()).status).toBe(200);
    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('main').getByText('"Nightly report" is revoked').waitFor();
    await page.getByRole('main').getByText('No application passwords yet.').waitFor();
    const refused = await request();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('incorrect_password');

    // The profile: a role change is saved through the API.
    await page.getByLabel('Role').selectOption('administrator');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('main').getByText('Saved.').waitFor();
    expect((await d.api('GET', `/users/${user.id}`)).body.role).toBe('administrator');

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sets a referrer with the member picker, shows a refusal in words, and ends the referral after a confirmation', async () => {
    const d = use();
    const ann = await d.ctx.users.create({ login: 'ann', email: 'ann@example.com', display_name: 'Ann Able', role: 'member' });
    const ben = await d.ctx.users.create({ login: 'ben', email: 'ben@example.com', display_name: 'Ben Baker', role: 'member' });
    const { page, foreign, errors, context } = await openPage(browser, d.url);
    await signInWithKeyboard(page, d.url, 'e2e-admin', 'correct horse battery');
    await page.goto(`${d.url}/admin/members/${ben.id}/referrals`);
    await page.getByRole('main').getByText('Nobody referred this member.').waitFor();

    // Ann referred Ben.
    await page.getByRole('button', { name: 'Set referrer' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('combobox', { name: 'Referrer' }).fill('ann');
    await page.getByRole('option', { name: /Ann Able \(ann, ann@example\.com\)/ }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Save referral' }).click();
    await page.getByRole('main').getByText('Ann Able is now the referrer of Ben Baker.').waitFor();
    expect((await d.api('GET', `/referrals/${ben.id}`)).body.referrer.id).toBe(ann.id);
    await expect.poll(() => page.getByRole('button', { name: 'Set referrer' }).count()).toBe(0);

    // Ben referring Ann would close a loop: the modal says so in the API's words.
    await page.getByRole('button', { name: 'Add referred member' }).click();
    await dialog.getByRole('combobox', { name: 'Referred member' }).fill('ann');
    await page.getByRole('option', { name: /Ann Able/ }).click();
    await dialog.getByRole('button', { name: 'Save referral' }).click();
    await dialog.getByText(/this referral would make a cycle/).waitFor();
    await screenshot(page, `referral-refusal-${dialect}`);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => focusedText(page)).toBe('Add referred member');

    // End it, after the confirmation.
    await page.getByRole('button', { name: 'End the referral of Ben Baker by Ann Able' }).click();
    await dialog.getByText(/will earn no referral credit on the future cashback of Ben Baker/).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'End referral' }).click();
    await page.getByRole('main').getByText('The referral of Ben Baker by Ann Able has ended.').waitFor();
    expect((await d.api('GET', `/referrals/${ben.id}`)).status).toBe(404);
    await page.getByRole('button', { name: 'Set referrer' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
