import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, describeEachDialect, dialects, type TestDatabase } from '../../helpers/context.js';
import { runCli } from '../../helpers/cli.js';

describeEachDialect('SEPA debtor settings', (use) => {
  it('answers 409 svc_sepa_not_configured naming what to set until the account is set', async () => {
    const { ctx } = use();
    expect(await ctx.sepaSettings.view()).toEqual({
      configured: false,
      missing: ['name', 'iban'],
      name: null,
      name_in_file: null,
      iban: null,
      bic: null,
      version: '09',
    });
    const err = await ctx.sepaSettings.debtor().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_sepa_not_configured', status: 409, data: { missing: ['name', 'iban'] } });
    expect((err as Error).message).toContain('cashtrack payouts sepa-settings --set name=');
  });

  it('stores a checked account, in electronic format, and gives it to a file', async () => {
    const { ctx } = use();
    const view = await ctx.sepaSettings.configure({ name: 'Cashback GmbH & Co. KG', iban: 'de02 1203 0000 0000 2020 51', bic: 'byladem1001' }, 'admin');
    expect(view).toEqual({
      configured: true,
      missing: [],
      name: 'Cashback GmbH & Co. KG',
      name_in_file: 'Cashback GmbH + Co. KG',
      iban: 'DE02120300000000202051',
      bic: 'BYLADEM1001',
      version: '09',
    });
    expect(await ctx.sepaSettings.debtor()).toEqual({
      debtor: { name: 'Cashback GmbH & Co. KG', iban: 'DE02120300000000202051', bic: 'BYLADEM1001' },
      version: '09',
    });
    expect((await ctx.sepaSettings.configure({ version: '03', bic: null }, 'admin')).version).toBe('03');
    expect((await ctx.sepaSettings.debtor()).debtor.bic).toBeNull();
    const rows = await ctx.db.select<{ value: string }>("SELECT value FROM settings WHERE name = 'payouts_sepa'");
    expect(JSON.parse(rows[0].value)).toEqual({ name: 'Cashback GmbH & Co. KG', iban: 'DE02120300000000202051', version: '03' });
    // The log says what changed, never the account.
    await ctx.logger.flush();
    const logs = await ctx.db.select<{ message: string; context: string | null }>("SELECT message, context FROM logs WHERE source = 'payouts'");
    expect(logs.some((l) => l.message === 'SEPA debtor account configured')).toBe(true);
    expect(JSON.stringify(logs)).not.toContain('DE02120300000000202051');
    await ctx.sepaSettings.configure({ version: null }, 'admin');
    expect((await ctx.sepaSettings.view()).version).toBe('09');
  });

  it('wants the BIC of an account outside the EEA', async () => {
    const { ctx } = use();
    const view = await ctx.sepaSettings.configure({ iban: 'CH93 0076 2011 6238 5295 7', bic: null }, 'admin');
    expect(view).toMatchObject({ configured: false, missing: ['bic'] });
    await expect(ctx.sepaSettings.debtor()).rejects.toMatchObject({ code: 'svc_sepa_not_configured', data: { missing: ['bic'] } });
    expect((await ctx.sepaSettings.configure({ bic: 'UBSWCHZH80A' }, 'admin')).configured).toBe(true);
  });

  it.each([
    [{ iban: 'DE88370400440532013000' }, 'svc_invalid_setting', 'iban: The IBAN has wrong check digits'],
    [{ iban: 'BR1800360305000010009795493C1' }, 'svc_invalid_setting', 'outside SEPA'],
    [{ bic: 'NOTABIC' }, 'svc_invalid_setting', 'bic: The BIC is not'],
    [{ version: '08' }, 'svc_invalid_setting', 'version: must be one of 09, 03'],
    [{ name: '李小龍' }, 'svc_invalid_setting', 'name: has no letter or digit'],
    [{ name: 'x'.repeat(141) }, 'svc_invalid_setting', 'at most 140'],
    [{ name: 'a\u0007b' }, 'svc_invalid_setting', 'control characters'],
    [{ creditor_id: 'DE98ZZZ09999999999' }, 'svc_unknown_setting', 'Settings: name, iban, bic, version'],
  ] as [Record<string, string>, string, string][])('refuses %j with 400 %s and stores nothing', async (values, code, message) => {
    const { ctx } = use();
    await ctx.sepaSettings.configure({ name: 'Cashback GmbH', iban: 'DE02120300000000202051', bic: 'BYLADEM1001', version: null }, 'admin');
    const before = await ctx.sepaSettings.view();
    const err = await ctx.sepaSettings.configure(values, 'admin').catch((e: unknown) => e);
    expect(err).toMatchObject({ code, status: 400 });
    expect((err as Error).message).toContain(message);
    expect(await ctx.sepaSettings.view()).toEqual(before);
  });

  it('reads a damaged settings row as nothing stored', async () => {
    const { ctx } = use();
    await ctx.settings.set('payouts_sepa', '{not json');
    expect(await ctx.sepaSettings.view()).toMatchObject({ configured: false, missing: ['name', 'iban'] });
  });
});

for (const dialect of dialects) {
  describe(`cashtrack payouts sepa-settings [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    it('shows, stores and refuses settings', async () => {
      const empty = await runCli(['payouts', 'sepa-settings'], { db });
      expect(empty.code).toBe(0);
      expect(empty.stdout).toMatch(/configured\s+no \(missing name, iban\)/);
      const set = await runCli(['payouts', 'sepa-settings', '--set', 'name=Cashback GmbH & Co. KG', '--set', 'iban=DE02 1203 0000 0000 2020 51'], { db });
      expect(set.code).toBe(0);
      expect(set.stdout).toBe('SEPA debtor account configured (name, iban); ready\n');
      const shown = await runCli(['payouts', 'sepa-settings'], { db });
      // As docs/cli.md shows it.
      expect(shown.stdout).toBe(
        'configured    yes\nname          Cashback GmbH & Co. KG\nname in file  Cashback GmbH + Co. KG\niban          DE02120300000000202051\nversion       pain.001.001.09\n',
      );
      const json = await runCli(['payouts', 'sepa-settings', '--set', 'version=03', '--unset', 'bic', '--json'], { db });
      expect(json.json()).toMatchObject({ configured: true, version: '03', bic: null });
      const bad = await runCli(['payouts', 'sepa-settings', '--set', 'iban=DE03120300000000202051'], { db });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe('svc_invalid_setting: iban: The IBAN has wrong check digits (a typo?).\n');
      expect((await runCli(['payouts', 'sepa-settings', '--set', 'iban=DE00'], { db })).stderr).toMatch(/^svc_invalid_setting: iban: The IBAN is not an IBAN/);
      const usage = await runCli(['payouts', 'sepa-settings', '--set', 'iban'], { db });
      expect(usage.code).toBe(2);
    });
  });
}
