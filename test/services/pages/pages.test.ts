import { expect, it, vi } from 'vitest';
import { OUTBOUND_REL, sanitizeText } from '../../../src/services/pages/sanitize.js';
import type { Page } from '../../../src/services/pages/index.js';
import { CouponCounts } from '../../../src/services/coupons/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { addShop } from '../../helpers/pages.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { ENCODED_MARKUP, expectPlain } from '../../helpers/markup.js';

const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err as { code: string; status: number; data: Record<string, any>; message: string },
  );

describeEachDialect('shop pages', (use) => {
  it('makes a page from the default template: plain-text title, sanitised body, member cashback, slug from the name', async () => {
    const { ctx } = use();
    const advertiserId = await addShop(ctx, 'awin', '100', {
      name: 'Acme <b>Shoes</b> & Co',
      domain: 'acme.example',
      site_url: 'https://www.acme.example/',
      logo_url: 'https://cdn.example/acme.png',
      description: '<p onclick="x()">Great shoes<script>alert(1)</script></p>',
    });
    const created = vi.fn();
    const published = vi.fn();
    ctx.hooks.addAction('cashtrack.page.created', 'test', created);
    ctx.hooks.addAction('cashtrack.page.published', 'test', published);
    const page = await ctx.pages.create('awin', '100', {}, 'user:1');
    expect(page).toMatchObject({
      module: 'awin',
      advertiser: '100',
      title: 'Acme Shoes & Co Cashback',
      slug: 'acme-shoes-and-co',
      status: 'draft',
      template: 'default',
      author: 'user:1',
      link: null,
      published_at: null,
    });
    // Default rule: 50% of a 4-10% commission.
    expect(page.excerpt).toBe('Get up to 5% cashback at Acme Shoes & Co.');
    expect(page.body).toContain('<h2>Acme &lt;b&gt;Shoes&lt;/b&gt; &amp; Co cashback</h2>');
    expect(page.body).toContain('<img src="https://cdn.example/acme.png" alt="Acme &lt;b&gt;Shoes&lt;/b&gt; &amp; Co" />');
    expect(page.body).toContain(`<a href="https://www.acme.example/" rel="${OUTBOUND_REL}">acme.example</a>`);
    expect(page.body).toContain('<p>Great shoes</p>');
    expect(page.body).not.toMatch(/script|onclick|%[A-Z_]+%/);
    expect(page.body).toContain('Coupons: 0');
    expect(created).toHaveBeenCalledTimes(1);
    expect(created.mock.calls[0][0]).toMatchObject({ id: page.id });
    expect(published).not.toHaveBeenCalled();
    const [row] = await ctx.db.select<{ page_id: unknown }>('SELECT page_id FROM advertisers WHERE id = ?', [advertiserId]);
    expect(Number(row.page_id)).toBe(page.id);
    expect((await ctx.advertisers.get('awin', '100')).page_id).toBe(page.id);
    expect(await ctx.pages.get(page.id)).toEqual(page);
  });

  it('keeps the title and excerpt plain when a feed name or an edit hides markup behind entities (encoded, double-encoded, mixed)', async () => {
    const { ctx } = use();
    let n = 0;
    for (const p of Object.values(ENCODED_MARKUP)) {
      // From a feed: the advertiser's name fills the template's title and excerpt.
      await addShop(ctx, 'awin', `enc${++n}`, { name: p });
      const made = await ctx.pages.create('awin', `enc${n}`, {}, 'user:1');
      expectPlain(made.title, sanitizeText);
      expectPlain(made.excerpt, sanitizeText);
      // From an administrator's edit.
      const edited = await ctx.pages.update(made.id, { title: p, excerpt: p }, 'user:1');
      for (const page of [edited, await ctx.pages.get(made.id)]) {
        expectPlain(page.title, sanitizeText);
        expectPlain(page.excerpt, sanitizeText);
      }
    }
  });

  it('fires published for a page made as publish, and renders empty tags as nothing', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '101', { name: 'Bare', domain: null, site_url: null, commission: null });
    const published = vi.fn();
    ctx.hooks.addAction('cashtrack.page.published', 'test-101', published);
    const page = await ctx.pages.create('awin', '101', { status: 'publish' }, 'cli');
    expect(page.status).toBe('publish');
    expect(page.published_at).not.toBeNull();
    expect(published).toHaveBeenCalledTimes(1);
    // No logo, no site, no cashback known: the image, the link target and the amount go, not the sentence.
    expect(page.body).not.toContain('<img');
    expect(page.body).not.toContain('href');
    expect(page.excerpt).toBe('Get cashback at Bare.');
  });

  it('refuses a second page (naming the first), an inactive advertiser, an unknown one and an unknown template', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '102', { name: 'Twice' });
    await addShop(ctx, 'awin', '103', { status: 'inactive' });
    const first = await ctx.pages.create('awin', '102', {}, 'cli');
    const again = await errorOf(ctx.pages.create('awin', '102', {}, 'cli'));
    expect(again).toMatchObject({
      code: 'svc_page_exists',
      status: 409,
      data: { module: 'awin', advertiser: '102', page: { id: first.id, slug: 'twice', title: 'Twice Cashback' } },
    });
    expect(await errorOf(ctx.pages.create('awin', '103', {}, 'cli'))).toMatchObject({ code: 'svc_advertiser_inactive', status: 409 });
    expect(await errorOf(ctx.pages.create('awin', 'nope', {}, 'cli'))).toMatchObject({ code: 'svc_advertiser_not_found', status: 404 });
    expect(await errorOf(ctx.pages.create('awin', '102', { template: 'nope' }, 'cli'))).toMatchObject({
      code: 'svc_invalid_page',
      status: 400,
      data: { field: 'template', templates: ['default'] },
    });
    const [{ n }] = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM pages WHERE module = 'awin' AND advertiser IN ('102', '103')");
    expect(Number(n)).toBe(1);
  });

  it('suffixes colliding slugs -2, -3 and falls back to the domain, then shop-<id>, for names without Latin letters', async () => {
    const { ctx } = use();
    for (const id of ['200', '201', '202']) await addShop(ctx, 'cj', id, { name: 'Same Name' });
    const jd = await addShop(ctx, 'cj', '203', { name: '京东商城', domain: 'jd.com' });
    const none = await addShop(ctx, 'cj', '204', { name: '京东', domain: null });
    await addShop(ctx, 'cj', '205', { name: 'Магазин Обуви' });
    const slugs = [];
    for (const id of ['200', '201', '202', '203', '204', '205']) slugs.push((await ctx.pages.create('cj', id, {}, 'cli')).slug);
    expect(slugs).toEqual(['same-name', 'same-name-2', 'same-name-3', 'jd-com', `shop-${none}`, 'magazin-obuvi']);
    expect(jd).toBeGreaterThan(0);
    const cjk = await ctx.pages.get((await ctx.advertisers.get('cj', '203')).page_id!);
    expect(cjk.title).toBe('京东商城 Cashback');
  });

  it('gives concurrent pages of shops with the same name distinct slugs, and one page per advertiser under a race', async () => {
    const { ctx } = use();
    const ids = Array.from({ length: 8 }, (_, i) => String(300 + i));
    for (const id of ids) await addShop(ctx, 'race', id, { name: 'Racing Shop' });
    const pages = await Promise.all(ids.map((id) => ctx.pages.create('race', id, {}, 'cli')));
    expect(new Set(pages.map((p) => p.slug)).size).toBe(8);
    expect(pages.map((p) => p.slug).sort()).toEqual(['racing-shop', ...Array.from({ length: 7 }, (_, i) => `racing-shop-${i + 2}`)].sort());

    await addShop(ctx, 'race', '399', { name: 'Only Once' });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => ctx.pages.create('race', '399', {}, 'cli')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) expect(o.reason).toMatchObject({ code: 'svc_page_exists' });
    const [{ n }] = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM pages WHERE module = 'race' AND advertiser = '399'");
    expect(Number(n)).toBe(1);
  });

  it('sanitises what a body filter adds, and ignores a filter that returns no string', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '400', { name: 'Filtered' });
    await addShop(ctx, 'awin', '401', { name: 'Broken Filter' });
    ctx.hooks.addFilter<string>('cashtrack.page.body', 'test-400', (html, info: { advertiser: { advertiser: string } }) =>
      info.advertiser.advertiser === '400'
        ? `${html}<p onmouseover="steal()">extra <a href="javascript:alert(1)">x</a></p><script>alert(2)</script><iframe src="https://evil.example/"></iframe>`
        : html,
    );
    ctx.hooks.addFilter<unknown>('cashtrack.page.body', 'test-401', (html, info: { advertiser: { advertiser: string } }) =>
      info.advertiser.advertiser === '401' ? 42 : html,
    );
    const page = await ctx.pages.create('awin', '400', {}, 'cli');
    expect(page.body).toContain('<p>extra <a>x</a></p>');
    expect(page.body).not.toMatch(/onmouseover|javascript|script|iframe/);
    const broken = await ctx.pages.create('awin', '401', {}, 'cli');
    expect(broken.body).toContain('<h2>Broken Filter cashback</h2>');
    ctx.hooks.wp.removeFilter('cashtrack.page.body', 'test-400');
    ctx.hooks.wp.removeFilter('cashtrack.page.body', 'test-401');
  });

  it('leaves no page behind when linking it to its advertiser fails', async () => {
    const { ctx } = use();
    const advertiserId = await addShop(ctx, 'awin', '500', { name: 'Half Page' });
    const spy = vi.spyOn(ctx.advertisers, 'linkPages').mockRejectedValueOnce(new Error('disk full'));
    await expect(ctx.pages.create('awin', '500', {}, 'cli')).rejects.toThrow('disk full');
    spy.mockRestore();
    const rows = await ctx.db.select('SELECT id FROM pages WHERE advertiser_id = ?', [advertiserId]);
    expect(rows).toHaveLength(0);
    expect((await ctx.advertisers.get('awin', '500')).page_id).toBeNull();
    // The slug was not spent either.
    expect((await ctx.pages.create('awin', '500', {}, 'cli')).slug).toBe('half-page');
  });

  it('renders the coupon count a plugged-in counter gives, and 0 when the counter fails', async () => {
    const { ctx } = use();
    const id = await addShop(ctx, 'coupons', '1', { name: 'With Coupons' });
    await addShop(ctx, 'coupons', '2', { name: 'Counter Down' });
    const counter = vi.spyOn(CouponCounts.prototype, 'countActive').mockImplementation(async (ids) => new Map(ids.map((i) => [i, i === id ? 7 : 0])));
    expect((await ctx.pages.create('coupons', '1', {}, 'cli')).body).toContain('Coupons: 7');
    counter.mockImplementation(async () => {
      throw new Error('coupons table locked');
    });
    expect((await ctx.pages.create('coupons', '2', {}, 'cli')).body).toContain('Coupons: 0');
    counter.mockRestore();
  });

  it("counts the shop's coupons active now: not scheduled, expired or removed ones, nor another shop's", async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '7001', { name: 'Counted Shop' });
    const day = 86_400_000;
    const now = ctx.clock.now().getTime();
    await insertCoupon(ctx, { advertiser: '7001' });
    await insertCoupon(ctx, { advertiser: '7001', ends_at: new Date(now + day) });
    await insertCoupon(ctx, { advertiser: '7001', starts_at: new Date(now + day) });
    await insertCoupon(ctx, { advertiser: '7001', ends_at: new Date(now - day) });
    await insertCoupon(ctx, { advertiser: '7001', status: 'removed' });
    await insertCoupon(ctx, { advertiser: '7002' });
    expect((await ctx.pages.create('awin', '7001', {}, 'cli')).body).toContain('Coupons: 2');
  });

  it('answers svc_page_exists without a page when the advertiser points at one that is gone', async () => {
    const { ctx } = use();
    const id = await addShop(ctx, 'awin', '800', { name: 'Dangling' });
    await ctx.db.execute('UPDATE advertisers SET page_id = 999999 WHERE id = ?', [id]);
    expect(await errorOf(ctx.pages.create('awin', '800', {}, 'cli'))).toMatchObject({ code: 'svc_page_exists', data: { page: null } });
  });

  it('gives up with 503 svc_database_busy when it keeps losing the race for a slug', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '801', { name: 'Always Taken' });
    const spy = vi.spyOn(ctx.advertisers, 'linkPages').mockRejectedValue(new Error('UNIQUE constraint failed: pages.slug'));
    try {
      expect(await errorOf(ctx.pages.create('awin', '801', {}, 'cli'))).toMatchObject({ code: 'svc_database_busy', status: 503 });
    } finally {
      spy.mockRestore();
    }
    expect(await ctx.db.select("SELECT id FROM pages WHERE module = 'awin' AND advertiser = '801'")).toHaveLength(0);
  });

  it('updates title, slug, body, excerpt and status: cleaned, re-sanitised, slug made unique, published once', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '600', { name: 'Editable' });
    await addShop(ctx, 'awin', '601', { name: 'Taken' });
    const page = await ctx.pages.create('awin', '600', {}, 'cli');
    await ctx.pages.create('awin', '601', {}, 'cli');
    const published = vi.fn();
    ctx.hooks.addAction('cashtrack.page.published', 'test-600', published);
    const updated = await ctx.pages.update(
      page.id,
      {
        title: '  New <em>title</em> ',
        slug: 'Taken',
        body: '<p style="x" onclick="y()">Hi <a href="https://shop.example/">go</a></p><script>1</script>',
        excerpt: '<b>short</b>',
        status: 'publish',
      },
      'user:2',
    );
    expect(updated).toMatchObject({
      title: 'New title',
      slug: 'taken-2',
      body: `<p>Hi <a href="https://shop.example/" rel="${OUTBOUND_REL}">go</a></p>`,
      excerpt: 'short',
      status: 'publish',
    });
    expect(updated.published_at).not.toBeNull();
    expect(published).toHaveBeenCalledTimes(1);
    const again = await ctx.pages.update(page.id, { status: 'draft' }, 'cli');
    expect(again.published_at).toBe(updated.published_at);
    await ctx.pages.update(page.id, { status: 'publish' }, 'cli');
    expect(published).toHaveBeenCalledTimes(2);
    // Its own slug stays its own.
    expect((await ctx.pages.update(page.id, { slug: 'taken-2' }, 'cli')).slug).toBe('taken-2');
    expect(await errorOf(ctx.pages.update(page.id, { title: '<b></b>' }, 'cli'))).toMatchObject({ code: 'svc_invalid_page', data: { field: 'title' } });
    expect(await errorOf(ctx.pages.update(page.id, { slug: '京东' }, 'cli'))).toMatchObject({ code: 'svc_invalid_page', data: { field: 'slug' } });
    expect(await errorOf(ctx.pages.update(999_999, { title: 'x' }, 'cli'))).toMatchObject({ code: 'svc_page_not_found', status: 404 });
    // A title past the bound is cut to it when the service is called directly.
    expect((await ctx.pages.update(page.id, { title: 'x'.repeat(10_000) }, 'cli')).title).toHaveLength(200);
    ctx.hooks.wp.removeAction('cashtrack.page.published', 'test-600');
  });

  it('deletes a page, frees its advertiser for a new one, and says so in a hook', async () => {
    const { ctx } = use();
    await addShop(ctx, 'awin', '700', { name: 'Deleted' });
    const page = await ctx.pages.create('awin', '700', {}, 'cli');
    const deleted = vi.fn();
    ctx.hooks.addAction('cashtrack.page.deleted', 'test-700', deleted);
    const result = await ctx.pages.remove(page.id, 'cli');
    expect(result).toEqual({ deleted: true, previous: page });
    expect(deleted.mock.calls[0][0]).toEqual(page);
    expect((await ctx.advertisers.get('awin', '700')).page_id).toBeNull();
    expect(await errorOf(ctx.pages.get(page.id))).toMatchObject({ code: 'svc_page_not_found' });
    expect(await errorOf(ctx.pages.remove(page.id, 'cli'))).toMatchObject({ code: 'svc_page_not_found' });
    expect((await ctx.pages.create('awin', '700', {}, 'cli')).slug).toBe('deleted');
  });

  it('lists by status, network, advertiser and title or slug prefix, and looks pages up by prefix', async () => {
    const { ctx } = use();
    await addShop(ctx, 'listnet', '1', { name: 'Zebra Books' });
    await addShop(ctx, 'listnet', '2', { name: 'Zebu Games' });
    await addShop(ctx, 'listnet', '3', { name: '100% Wild_Cards' });
    const a = await ctx.pages.create('listnet', '1', { status: 'publish' }, 'cli');
    const b = await ctx.pages.create('listnet', '2', {}, 'cli');
    const c = await ctx.pages.create('listnet', '3', {}, 'cli');
    const list = (q: Record<string, unknown>) =>
      ctx.pages.list({ page: 1, per_page: 10, ...q }).then((r) => ({ ids: r.items.map((p: Page) => p.id), total: r.total }));
    expect(await list({ network: 'listnet' })).toEqual({ ids: [c.id, b.id, a.id], total: 3 });
    expect(await list({ network: 'listnet', status: 'publish' })).toEqual({ ids: [a.id], total: 1 });
    expect(await list({ network: 'listnet', advertiser: '2' })).toEqual({ ids: [b.id], total: 1 });
    expect(await list({ search: 'zeb', orderby: 'title', order: 'asc' })).toEqual({ ids: [a.id, b.id], total: 2 });
    expect(await list({ search: 'zebu-g' })).toEqual({ ids: [b.id], total: 1 });
    expect(await list({ search: '100%' })).toEqual({ ids: [c.id], total: 1 });
    expect(await list({ search: '%' })).toEqual({ ids: [], total: 0 });
    expect((await ctx.pages.lookup('Zeb')).items).toEqual([
      { id: a.id, label: 'Zebra Books Cashback (zebra-books)' },
      { id: b.id, label: 'Zebu Games Cashback (zebu-games)' },
    ]);
    expect((await ctx.pages.lookup('zebu-')).items.map((i) => i.id)).toEqual([b.id]);
    expect((await ctx.pages.lookup('_')).items).toEqual([]);
    expect((await ctx.pages.lookup('Z', { page: 2, per_page: 1 })).items.map((i) => i.id)).toEqual([b.id]);
  });

  it('finds lookup prefixes through the title and slug indexes', async () => {
    const { ctx } = use();
    if (ctx.db.dialect !== 'sqlite') return;
    const plan = await ctx.db.select<{ detail: string }>(
      "EXPLAIN QUERY PLAN SELECT id, title, slug FROM pages WHERE title LIKE ? ESCAPE '!' OR slug LIKE ? ESCAPE '!'",
      ['ab%', 'ab%'],
    );
    const text = plan.map((p) => p.detail).join('\n');
    expect(text).toContain('pages_title');
    expect(text).toContain('pages_slug');
  });
});

describeEachDialect(
  'shop pages with a link template and another default',
  (use) => {
    it('shows each page at its configured address and uses the configured default template and status', async () => {
      const { ctx } = use();
      await addShop(ctx, 'awin', '1', { name: 'Linked Shop' });
      const page = await ctx.pages.create('awin', '1', {}, 'cli');
      expect(page).toMatchObject({
        template: 'short',
        status: 'publish',
        title: 'Linked Shop',
        link: `https://site.example/shops/linked-shop?p=${page.id}`,
        body: '<p>Linked Shop on site: shop1.example</p>',
      });
      expect(ctx.pages.templates()).toEqual(['short', 'default']);
    });
  },
  {
    'pages.default_template': 'short',
    'pages.default_status': 'publish',
    'pages.link_template': 'https://site.example/shops/%SLUG%?p=%ID%',
    'pages.templates.short': { title: '%NAME%', body: '<p>%NAME% on site: %DOMAIN%</p>', excerpt: '' },
  },
);
