import { beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { HOOKS } from '../../../src/hooks/index.js';
import type { RefreshState } from '../../../src/services/coupons/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { plainText } from '../../../src/services/coupons/text.js';
import { couponModule, networkCoupon, type CouponSource } from '../../helpers/coupons.js';
import { ENCODED_MARKUP, expectPlain } from '../../helpers/markup.js';

const clock = new ManualClock('2026-06-01T12:00:00Z');
const main: CouponSource = { pages: [], walks: [] };
const since: CouponSource = { pages: [], walks: [] };
const other: CouponSource = { pages: [], walks: [] };
const day = 86_400_000;

describeEachDialect(
  'coupon refresh',
  (use) => {
    beforeAll(async () => {
      const { ctx } = use();
      for (const id of ['cpn', 'cpninc', 'cpnother']) {
        await ctx.networks.configure(id, { publisherId: '77' }, 'test');
        await ctx.networks.enable(id, 'test');
      }
    });

    const events = () => {
      const seen: { name: string; id: number; reason: unknown }[] = [];
      const { ctx } = use();
      for (const name of [HOOKS.couponCreated, HOOKS.couponUpdated, HOOKS.couponExpired]) {
        ctx.hooks.addAction(name, 'test-events', (c: { id: number }, meta: { reason: unknown }) => seen.push({ name, id: c.id, reason: meta?.reason }));
      }
      return {
        seen,
        off: () => {
          for (const name of [HOOKS.couponCreated, HOOKS.couponUpdated, HOOKS.couponExpired]) ctx.hooks.wp.removeAction(name, 'test-events');
        },
      };
    };

    const byCouponId = async (network: string, couponId: string) => {
      const { ctx } = use();
      const [row] = await ctx.db.select<{ id: unknown }>('SELECT id FROM coupons WHERE network = ? AND coupon_id = ?', [network, couponId]);
      return ctx.coupons.get(Number(row.id));
    };

    it('imports new coupons as plain text, counting duplicates, deals, bad dates and unusable records', async () => {
      const { ctx } = use();
      const ev = events();
      main.pages = [
        [
          networkCoupon(1, { title: 'Spring <b>sale</b> <script>alert(1)</script>&amp; more', description: '<p>Line one</p><p>Line&nbsp;two</p>' }),
          networkCoupon(2, { code: 'NOT REQUIRED' }),
          networkCoupon(3, { starts_at: new Date(clock.now().getTime() + 2 * day), ends_at: new Date(clock.now().getTime() + 9 * day) }),
          networkCoupon(4, { starts_at: new Date('2026-07-01T00:00:00Z'), ends_at: new Date('2026-06-20T00:00:00Z') }),
          networkCoupon('', {}),
          networkCoupon(5, { title: '<br>' }),
        ],
        [networkCoupon(1, { title: 'Spring sale, listed again' }), networkCoupon(6, { code: null, ends_at: new Date(clock.now().getTime() - day) })],
      ];
      const counts = await ctx.coupons.refresh('cpn');
      ev.off();
      expect(counts).toMatchObject({ incremental: false, pages: 2, seen: 6, created: 5, updated: 0, removed: 0, failed: 2, duplicates: 1, bad_dates: 1 });
      expect(ev.seen.filter((e) => e.name === HOOKS.couponCreated)).toHaveLength(5);

      const first = await byCouponId('cpn', '1');
      // The later listing wins.
      expect(first).toMatchObject({ title: 'Spring sale, listed again', type: 'code', status: 'active', discount: { type: 'percent', value: '10' } });
      const page = await ctx.coupons.list({ network: 'cpn', orderby: 'id', page: 1, per_page: 10 });
      expect(page.total).toBe(5);
      expect((await byCouponId('cpn', '2')).type).toBe('deal');
      expect((await byCouponId('cpn', '3')).status).toBe('scheduled');
      expect((await byCouponId('cpn', '4')).status).toBe('expired');
      expect(await byCouponId('cpn', '6')).toMatchObject({ type: 'deal', status: 'expired' });
    });

    it('strips markup from titles and descriptions, keeping line breaks in descriptions', async () => {
      const { ctx } = use();
      main.pages = [
        [
          networkCoupon(1, {
            title: 'Spring <b>sale</b> <script>alert(1)</script>&amp; more',
            description: '<p>Line one</p><p>Line&nbsp;two</p><style>p{}</style>',
          }),
        ],
      ];
      await ctx.coupons.refresh('cpn', { force: true });
      const c = await byCouponId('cpn', '1');
      expect(c.title).toBe('Spring sale & more');
      expect(c.description).toBe('Line one\nLine two');
    });

    it('stores no markup from entity-encoded feed text (encoded, double-encoded, mixed), and cleaning it again changes nothing', async () => {
      const { ctx } = use();
      const payloads = Object.values(ENCODED_MARKUP);
      main.pages = [payloads.map((p, i) => networkCoupon(90 + i, { title: p, description: p, terms: p }))];
      await ctx.coupons.refresh('cpn', { force: true });
      for (let i = 0; i < payloads.length; i++) {
        const c = await byCouponId('cpn', String(90 + i));
        expectPlain(c.title, (t) => plainText(t, false));
        expectPlain(c.description, (t) => plainText(t, true));
        expectPlain(c.terms, (t) => plainText(t, true));
      }
    });

    it('keeps edited and AI-written fields across refreshes, stores the network value for a reset, and applies other changes', async () => {
      const { ctx } = use();
      main.pages = [[networkCoupon(10, { title: 'Network title', description: 'Network words', terms: 'Old terms' })]];
      await ctx.coupons.refresh('cpn', { force: true });
      const before = await byCouponId('cpn', '10');
      await ctx.coupons.update(before.id, { title: 'Admin title' }, { actor: 'admin' });
      await ctx.coupons.applyRewrite(before.id, { description: 'AI words' }, { actor: 'ai' });

      main.pages = [[networkCoupon(10, { title: 'Network title v2', description: 'Network words v2', terms: 'New terms', code: 'NEWCODE' })]];
      const ev = events();
      const counts = await ctx.coupons.refresh('cpn');
      ev.off();
      expect(counts).toMatchObject({ seen: 1, updated: 1, created: 0 });
      expect(ev.seen).toEqual([{ name: HOOKS.couponUpdated, id: before.id, reason: 'refresh' }]);
      const after = await ctx.coupons.get(before.id);
      expect(after).toMatchObject({
        title: 'Admin title',
        description: 'AI words',
        terms: 'New terms',
        code: 'NEWCODE',
        edited_fields: ['title'],
        ai_fields: ['description'],
      });
      expect(after.network_values).toMatchObject({ title: 'Network title v2', description: 'Network words v2' });

      // Revert gives the network-owned description the network's latest text; reset does the same for the title.
      expect((await ctx.coupons.revert(before.id, { actor: 'admin' })).description).toBe('Network words v2');
      expect((await ctx.coupons.update(before.id, { reset: ['title'] }, { actor: 'admin' })).title).toBe('Network title v2');

      // Nothing changed at the network: the coupon is passed over.
      const again = await ctx.coupons.refresh('cpn');
      expect(again).toMatchObject({ unchanged: 1, updated: 0 });
    });

    it("keeps an administrator's edit of every editable field, ends_at included, while the network changes them all", async () => {
      const { ctx } = use();
      const past = new Date(clock.now().getTime() - day);
      main.pages = [[networkCoupon(11, { ends_at: new Date(clock.now().getTime() + 10 * day) })]];
      await ctx.coupons.refresh('cpn', { force: true });
      const before = await byCouponId('cpn', '11');
      const edit = {
        code: 'ADMIN',
        title: 'Admin title',
        description: 'Admin words',
        terms: 'Admin terms',
        discount_type: 'amount',
        discount_value: '15',
        discount_currency: 'EUR',
        discount_text: '15 EUR off',
        landing_url: 'https://shop.example/admin',
        starts_at: '2026-05-01T00:00:00.000Z',
        ends_at: '2026-12-31T00:00:00.000Z',
        exclusive: true,
        regions: ['DE', 'FR'],
      } as const;
      // Every field an administrator may edit is in the edit, so a field added later fails here.
      const { COUPON_FIELDS } = await import('../../../src/services/coupons/rows.js');
      expect(Object.keys(edit).sort()).toEqual([...COUPON_FIELDS].sort());
      await ctx.coupons.update(before.id, edit, { actor: 'admin' });

      // The network changes every field, and says the coupon ended yesterday.
      const network = {
        code: 'NET2',
        title: 'Network title v2',
        description: 'Network words v2',
        terms: 'Network terms v2',
        discount: { type: 'percent' as const, value: '20', currency: null, text: '20%' },
        url: 'https://shop.example/network-v2',
        starts_at: new Date('2026-04-01T00:00:00.000Z'),
        ends_at: past,
        exclusive: false,
        regions: ['GB'],
      };
      main.pages = [[networkCoupon(11, network)]];
      const counts = await ctx.coupons.refresh('cpn');
      expect(counts).toMatchObject({ seen: 1, updated: 1, expired: 0 });
      const after = await ctx.coupons.get(before.id);
      const { discount_type, discount_value, discount_currency, discount_text, ...plain } = edit;
      expect(after).toMatchObject({ ...plain, discount: { type: discount_type, value: discount_value, currency: discount_currency, text: discount_text } });
      expect([...after.edited_fields].sort()).toEqual([...COUPON_FIELDS].sort());
      // The administrator's end date, not the network's, decides the status.
      expect(after.status).toBe('active');
      expect(after.network_values).toMatchObject({ code: 'NET2', title: 'Network title v2', ends_at: past.toISOString(), regions: ['GB'] });
    });

    it('marks what the network no longer lists removed, and brings a coupon back when it is listed again', async () => {
      const { ctx } = use();
      main.pages = [[networkCoupon(20), networkCoupon(21), networkCoupon(22)]];
      await ctx.coupons.refresh('cpn', { force: true });
      main.pages = [[networkCoupon(20), networkCoupon(21)]];
      const ev = events();
      expect(await ctx.coupons.refresh('cpn')).toMatchObject({ removed: 1 });
      ev.off();
      const gone = await byCouponId('cpn', '22');
      expect(gone.status).toBe('removed');
      expect(gone.removed_at).not.toBeNull();
      expect(ev.seen).toEqual([{ name: HOOKS.couponUpdated, id: gone.id, reason: 'removed' }]);
      expect((await ctx.coupons.list({ network: 'cpn', status: 'removed', page: 1, per_page: 100 })).items.map((c) => c.coupon_id)).toContain('22');

      main.pages = [[networkCoupon(20), networkCoupon(21), networkCoupon(22)]];
      expect(await ctx.coupons.refresh('cpn')).toMatchObject({ removed: 0, updated: 1 });
      expect(await byCouponId('cpn', '22')).toMatchObject({ status: 'active', removed_at: null });
    });

    it('refuses to remove more than the allowed share at once, removing nothing, unless forced', async () => {
      const { ctx } = use();
      main.pages = [[networkCoupon(30), networkCoupon(31), networkCoupon(32), networkCoupon(33)]];
      await ctx.coupons.refresh('cpn', { force: true });
      const removed = async () => (await ctx.coupons.list({ network: 'cpn', status: 'removed', page: 1, per_page: 100 })).total;
      const before = await removed();
      main.pages = [[networkCoupon(30)]];
      await expect(ctx.coupons.refresh('cpn')).rejects.toMatchObject({
        code: 'svc_coupons_mass_removal',
        status: 409,
        data: { network: 'cpn', would_remove: 3, total: 4, max_removed_share: 0.5 },
      });
      expect(await removed()).toBe(before);
      const network = await ctx.networks.get('cpn');
      expect(network.last_error).toContain('more than the allowed 50%');

      // A network answering an empty list is refused the same way.
      main.pages = [];
      await expect(ctx.coupons.refresh('cpn')).rejects.toMatchObject({ code: 'svc_coupons_mass_removal' });

      main.pages = [[networkCoupon(30)]];
      expect(await ctx.coupons.refresh('cpn', { force: true })).toMatchObject({ removed: 3 });
    });

    it('moves coupons to expired as their end passes and fires cashtrack.coupon.expired once', async () => {
      const { ctx } = use();
      main.pages = [
        [networkCoupon(40, { ends_at: new Date(clock.now().getTime() + day) }), networkCoupon(41, { starts_at: new Date(clock.now().getTime() + day / 2) })],
      ];
      await ctx.coupons.refresh('cpn', { force: true });
      expect((await byCouponId('cpn', '41')).status).toBe('scheduled');
      clock.advance(2 * day);
      try {
        // Reads compute the status from the dates at once; the stored status follows at the next refresh.
        expect((await byCouponId('cpn', '40')).status).toBe('expired');
        expect((await ctx.coupons.list({ network: 'cpn', status: 'expired', page: 1, per_page: 100 })).items.map((c) => c.coupon_id)).toContain('40');
        expect((await ctx.coupons.list({ network: 'cpn', status: 'active', page: 1, per_page: 100 })).items.map((c) => c.coupon_id)).toContain('41');
        const ev = events();
        const counts = await ctx.coupons.refresh('cpn');
        const again = await ctx.coupons.refresh('cpn');
        ev.off();
        expect(counts.expired).toBe(1);
        expect(again.expired).toBe(0);
        const expired = await byCouponId('cpn', '40');
        expect(ev.seen).toEqual([{ name: HOOKS.couponExpired, id: expired.id, reason: 'sweep' }]);
        const [row] = await ctx.db.select<{ status: unknown }>("SELECT status FROM coupons WHERE network = 'cpn' AND coupon_id = '41'");
        expect(row.status).toBe('active');
      } finally {
        clock.advance(-2 * day);
      }
    });

    it('asks an incremental network only for changes since the last refresh and removes nothing then', async () => {
      const { ctx } = use();
      since.pages = [[networkCoupon(50), networkCoupon(51)]];
      expect(await ctx.coupons.refresh('cpninc')).toMatchObject({ incremental: false, created: 2 });
      expect(since.walks.at(-1)).toEqual({ after: null, updatedSince: null });
      since.pages = [[networkCoupon(51, { title: 'Changed' })]];
      expect(await ctx.coupons.refresh('cpninc')).toMatchObject({ incremental: true, updated: 1, removed: 0 });
      expect(since.walks.at(-1)?.updatedSince).toEqual(clock.now());
      expect((await byCouponId('cpninc', '50')).status).toBe('active');
      // A full refresh reads everything and removes what is gone.
      expect(await ctx.coupons.refresh('cpninc', { full: true, force: true })).toMatchObject({ incremental: false, removed: 1 });
      expect(since.walks.at(-1)).toEqual({ after: null, updatedSince: null });
      expect(await ctx.coupons.refresh('cpninc')).toMatchObject({ incremental: true });
      // A day after the last full refresh, the next one is full again.
      clock.advance(day);
      try {
        expect(await ctx.coupons.refresh('cpninc')).toMatchObject({ incremental: false });
        expect(await ctx.coupons.refresh('cpninc')).toMatchObject({ incremental: true });
      } finally {
        clock.advance(-day);
      }
    });

    it('resumes an interrupted refresh after the last stored page without losing what it saw', async () => {
      const { ctx } = use();
      const ids = Array.from({ length: 25 }, (_, i) => 60 + i);
      main.pages = ids.map((i) => [networkCoupon(i)]);
      await ctx.coupons.refresh('cpn', { force: true });
      main.pages = ids.map((i) => [networkCoupon(i, { title: 'v2' })]);
      main.failAt = { at: 22, error: new Error('network went away') };
      let saved: RefreshState | null = null;
      await expect(ctx.coupons.refresh('cpn', { onPage: async (s) => void (saved = s) })).rejects.toThrow('network went away');
      // Changes are written (and checkpointed) every 20 pages: the first 20 are stored.
      expect(saved).toMatchObject({ next: '20', counts: { pages: 20, updated: 20 } });
      expect((await byCouponId('cpn', '79')).title).toBe('v2');
      expect((await byCouponId('cpn', '80')).title).toBe('Deal 80');
      const counts = await ctx.coupons.refresh('cpn', { resume: saved });
      expect(main.walks.at(-1)).toEqual({ after: '20', updatedSince: null });
      expect(counts).toMatchObject({ pages: 25, updated: 25, removed: 0 });
      expect((await byCouponId('cpn', '84')).title).toBe('v2');
    });

    it('stops at the next page when told to, recording no failure', async () => {
      const { ctx } = use();
      main.pages = [[networkCoupon(90)], [networkCoupon(91)], [networkCoupon(92)]];
      await ctx.db.execute("UPDATE networks SET last_error = NULL WHERE id = 'cpn'");
      const stop = new AbortController();
      const stopped = ctx.coupons.refresh('cpn', { signal: stop.signal, onProgress: () => stop.abort(new Error('cancelled by a test')) });
      await expect(stopped).rejects.toThrow('cancelled by a test');
      expect(main.walks.at(-1)).toEqual({ after: null, updatedSince: null });
      expect((await ctx.networks.get('cpn')).last_error).toBeNull();
    });

    it('refuses a network without a coupon list', async () => {
      const { ctx } = use();
      await expect(ctx.coupons.refresh('cpnother')).rejects.toMatchObject({ code: 'svc_coupons_unsupported', status: 409 });
      await expect(ctx.coupons.startRefresh({ network: 'cpnother' }, 'test')).rejects.toMatchObject({ code: 'svc_coupons_unsupported' });
      await expect(ctx.coupons.startRefresh({ network: 'nosuch' }, 'test')).rejects.toMatchObject({ code: 'svc_network_not_found' });
    });

    it('gives a member the advertiser tracking link landing on the coupon page, or the home page when the page is elsewhere', async () => {
      const { ctx } = use();
      const now = clock.now();
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, domain, site_url, status, created_at, updated_at) VALUES ('cpn', '501', 'Shop', 'shop.example', 'https://shop.example', 'active', ?, ?)",
        [now, now],
      );
      const member = await ctx.users.create({ login: 'couponmember', email: 'cm@example.test', role: 'member' }, 'test');
      main.pages = [
        [networkCoupon(70), networkCoupon(71, { url: 'https://elsewhere.example/x' }), networkCoupon(72, { ends_at: new Date(now.getTime() - day) })],
      ];
      await ctx.coupons.refresh('cpn', { force: true });
      const link = await ctx.coupons.link((await byCouponId('cpn', '70')).id, member.id);
      expect(link).toMatchObject({ deeplink: true, code: 'CODE70', sub_id: String(member.id) });
      expect(link.url).toBe(`https://go.example/c?pub=77&adv=501&sub=${member.id}&url=${encodeURIComponent('https://shop.example/sale')}`);
      const home = await ctx.coupons.link((await byCouponId('cpn', '71')).id, 'couponmember');
      expect(home).toMatchObject({ deeplink: false, url: `https://go.example/c?pub=77&adv=501&sub=${member.id}` });
      await expect(ctx.coupons.link((await byCouponId('cpn', '72')).id, member.id)).rejects.toMatchObject({ code: 'svc_coupon_unavailable', status: 409 });
    });
  },
  {},
  { clock, networkModules: [couponModule('cpn', main), couponModule('cpninc', since, { since: true }), couponModule('cpnother', other, { coupons: false })] },
);
