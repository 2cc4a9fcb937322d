import { expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../../../src/services/users/passwords.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('users', (use) => {
  it('creates a member by default with the login as display name', async () => {
    const user = await use().ctx.users.create({ login: 'alice', email: 'alice@example.com' });
    expect(user).toMatchObject({ login: 'alice', email: 'alice@example.com', display_name: 'alice', role: 'member', status: 'active' });
  });

  it('refuses a duplicate login or email, case-insensitively, with 409 svc_user_exists', async () => {
    const { users } = use().ctx;
    await users.create({ login: 'bob', email: 'bob@example.com' });
    await expect(users.create({ login: 'BOB', email: 'other@example.com' })).rejects.toMatchObject({
      code: 'svc_user_exists',
      status: 409,
      data: { field: 'login' },
    });
    await expect(users.create({ login: 'bobby', email: 'Bob@Example.com' })).rejects.toMatchObject({ code: 'svc_user_exists', data: { field: 'email' } });
  });

  it('refuses bad logins, emails and roles with 400 svc_invalid_user', async () => {
    const { users } = use().ctx;
    await expect(users.create({ login: 'has space', email: 'x@example.com' })).rejects.toMatchObject({ code: 'svc_invalid_user', data: { field: 'login' } });
    await expect(users.create({ login: 'x', email: 'not-an-email' })).rejects.toMatchObject({ code: 'svc_invalid_user', data: { field: 'email' } });
    await expect(users.create({ login: 'y', email: 'y@example.com', role: 'owner' as never })).rejects.toMatchObject({
      code: 'svc_invalid_user',
      data: { field: 'role' },
    });
    await expect(users.create({ login: "x' OR 1=1 --", email: 'z@example.com' })).rejects.toMatchObject({ code: 'svc_invalid_user' });
  });

  it('hashes login passwords with scrypt at the configured cost and never stores them in clear', async () => {
    const { ctx } = use();
    await ctx.users.create({ login: 'carol', email: 'carol@example.com', password: 'a long password' });
    const found = await ctx.users.credentialsOf('carol');
    expect(found?.passwordHash).toMatch(/^\$scrypt\$N=1024,r=8,p=1\$/); // auth.scrypt_log_n in tests
    expect(found?.passwordHash).not.toContain('a long password');
  });

  it('hashes at N=2^17, r=8, p=1 by default, and still verifies hashes of other costs', async () => {
    const strong = await hashPassword('a long password');
    expect(strong).toMatch(/^\$scrypt\$N=131072,r=8,p=1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await verifyPassword('a long password', strong)).toBe(true);
    expect(await verifyPassword('a long passwore', strong)).toBe(false);
    const old = await hashPassword('a long password', 15);
    expect(await verifyPassword('a long password', old, 10)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash(strong)).toBe(false);
    // A stored hash that asks for an absurd cost is refused, not run.
    expect(await verifyPassword('a long password', old.replace('N=32768', 'N=1073741824'), 10)).toBe(false);
  });

  /** The 25 shoppers and Dave of the search tests, made by whichever of them runs first. */
  const shoppers = async () => {
    const { users } = use().ctx;
    if (await users.findByLogin('dave')) return;
    for (let i = 0; i < 25; i++) await users.create({ login: `shopper${String(i).padStart(2, '0')}`, email: `s${i}@shop.example`, display_name: `Zed ${i}` });
    await users.create({ login: 'dave', email: 'dave@example.com', display_name: 'Shopaholic Dave' });
  };

  it('finds users by prefix of login, email or display name for the typeahead, at most 20', async () => {
    const { users } = use().ctx;
    await shoppers();
    expect((await users.lookup('shopper0')).items).toHaveLength(10);
    expect((await users.lookup('SHOP')).items).toHaveLength(20);
    const byName = await users.lookup('shopaholic');
    expect(byName.items).toEqual([{ id: expect.any(Number), label: 'Shopaholic Dave (dave, dave@example.com)' }]);
    expect((await users.lookup('s1@shop')).items).toHaveLength(1);
    expect((await users.lookup('100%')).items).toEqual([]);
    expect((await users.lookup('_')).items).toEqual([]);
  });

  it('pages the typeahead by login and counts every match once, whichever columns it matched', async () => {
    const { users } = use().ctx;
    // Matches by login (typo*), by email (typo@...) and by display name (Typo ...), some by all three.
    for (let i = 0; i < 23; i++) await users.create({ login: `typo${String(i).padStart(2, '0')}`, email: `t${i}@typo.example`, display_name: `Typo ${i}` });
    await users.create({ login: 'xena', email: 'typo.x@example.com', display_name: 'Xena' });
    await users.create({ login: 'yves', email: 'yves@example.com', display_name: 'Typographer Yves' });
    const first = await users.lookup('typo', { page: 1, per_page: 20 });
    const second = await users.lookup('typo', { page: 2, per_page: 20 });
    expect(first.total).toBe(25);
    expect(second.total).toBe(25);
    expect(first.items).toHaveLength(20);
    expect(second.items).toHaveLength(5);
    const labels = [...first.items, ...second.items].map((u) => u.label);
    expect(new Set(labels).size).toBe(25);
    expect(labels.slice(-2)).toEqual(['Xena (xena, typo.x@example.com)', 'Typographer Yves (yves, yves@example.com)']);
    expect((await users.lookup('typo', { page: 3, per_page: 10 })).items.map((u) => u.label)).toEqual(labels.slice(20, 25).slice(0, 5));
  });

  it('lists users by login with a prefix search and paging', async () => {
    const { users } = use().ctx;
    await shoppers();
    const page = await users.list({ search: 'shopper', page: 2, per_page: 10 });
    expect(page.total).toBe(25);
    expect(page.items.map((u) => u.login)[0]).toBe('shopper10');
  });

  it('imports CSV rows, skipping bad ones with the reason and keeping the good ones', async () => {
    const { users } = use().ctx;
    const csv = [
      'login,email,display_name,role',
      'eve,eve@example.com,Eve,administrator',
      'frank,not-an-email,Frank',
      'eve,eve2@example.com,Eve again',
      'gina,gina@example.com,"Gina, G."',
      'too,many,columns,member,extra',
      ',nologin@example.com,x',
      'hank,hank@example.com,,owner',
      'ivan,ivan@example.com',
    ].join('\n');
    const report = await users.importCsv(csv);
    expect(report.created).toBe(3);
    expect(report.skipped.map((s) => [s.line, s.code])).toEqual([
      [3, 'svc_invalid_user'],
      [4, 'svc_user_exists'],
      [6, 'svc_invalid_row'],
      [7, 'svc_invalid_row'],
      [8, 'svc_invalid_user'],
    ]);
    expect((await users.findByLogin('gina'))?.display_name).toBe('Gina, G.');
    expect((await users.findByLogin('eve'))?.role).toBe('administrator');
    expect((await users.findByLogin('ivan'))?.display_name).toBe('ivan');
  });

  it('reports the file line of a skipped row across blank lines and multi-line fields', async () => {
    const report = await use().ctx.users.importCsv('jo,jo@example.com,"Jo\nSecond line"\n\n\nbad row,x@example.com,X\n');
    expect(report.created).toBe(1);
    expect(report.skipped.map((s) => s.line)).toEqual([5]);
  });

  it('refuses a file that is not CSV', async () => {
    await expect(use().ctx.users.importCsv('a,"b\nc')).rejects.toMatchObject({ code: 'svc_invalid_csv' });
  });
});
