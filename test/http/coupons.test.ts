import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { couponModule, insertCoupon, networkCoupon, type CouponSource } from '../helpers/coupons.js';
import { adminClient } from '../helpers/http.js';

type Json = Record<string, any>;

const source: CouponSource = { pages: [], walks: [] };

describeEachDialect(
  'coupons over REST',
  (use) => {
    const api = adminClient(use);
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      const { ctx } = use();
      const now = Date.now();
      ids.code = await insertCoupon(ctx, {
        network: 'restcpn',
        advertiser: '9',
        title: 'Alpha winter sale',
        code: 'WINTER',
        ends_at: new Date(now + 86_400_000),
      });
      ids.deal = await insertCoupon(ctx, { network: 'restcpn', advertiser: '9', title: 'Free shipping on shoes', code: '', discount_type: 'free_shipping' });
      ids.old = await insertCoupon(ctx, { network: 'restcpn', advertiser: '8', title: 'Old deal', code: '', ends_at: new Date(now - 86_400_000) });
      await ctx.networks.configure('restcpn', { publisherId: '5' }, 'test');
      await ctx.networks.enable('restcpn', 'test');
    });

    it('lists coupons with filters, ordering and paging headers', async () => {
      const all = await api.get('/coupons?network=restcpn&orderby=id&order=asc');
      expect(all.statusCode).toBe(200);
      expect((all.result as Json[]).map((c) => c.id)).toEqual([ids.code, ids.deal, ids.old]);
      expect(all.headers['x-wp-total']).toBe('3');
      expect(((await api.get('/coupons?network=restcpn&type=deal')).result as Json[]).map((c) => c.id)).toEqual([ids.old, ids.deal]);
      expect(((await api.get('/coupons?network=restcpn&type=code')).result as Json[]).map((c) => c.code)).toEqual(['WINTER']);
      expect(((await api.get('/coupons?network=restcpn&status=expired')).result as Json[]).map((c) => c.id)).toEqual([ids.old]);
      expect(((await api.get('/coupons?network=restcpn&search=ship')).result as Json[]).map((c) => c.id)).toEqual([ids.deal]);
      expect(((await api.get('/coupons?network=restcpn&search=wint')).result as Json[]).map((c) => c.id)).toEqual([ids.code]);
      expect(((await api.get('/coupons?network=restcpn&advertiser=8')).result as Json[]).map((c) => c.id)).toEqual([ids.old]);
      const soon = new Date(Date.now() + 2 * 86_400_000).toISOString();
      expect(
        ((await api.get(`/coupons?network=restcpn&expires_before=${encodeURIComponent(soon)}&orderby=ends_at&order=asc`)).result as Json[]).map((c) => c.id),
      ).toEqual([ids.old, ids.code]);
      const paged = await api.get('/coupons?network=restcpn&per_page=1&page=2');
      expect(paged.headers['x-wp-totalpages']).toBe('3');
      expect((await api.get('/coupons?status=gone')).statusCode).toBe(400);
      expect((await api.get('/coupons?orderby=price')).statusCode).toBe(400);
    });

    it('shows one coupon and answers 404 svc_coupon_not_found for an unknown one', async () => {
      const res = await api.get(`/coupons/${ids.code}`);
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({
        id: ids.code,
        type: 'code',
        code: 'WINTER',
        status: 'active',
        discount: { type: 'percent', value: '10' },
        network_values: {},
      });
      const missing = await api.get('/coupons/99999999');
      expect(missing.statusCode).toBe(404);
      expect(missing.result).toMatchObject({ code: 'svc_coupon_not_found' });
      expect((await api.get('/coupons/abc')).statusCode).toBe(400);
    });

    it('edits fields, records them as edited and resets one back to the network', async () => {
      const res = await api.post(`/coupons/${ids.deal}`, { title: 'Our free <i>shipping</i>', ends_at: '2031-01-01T00:00:00Z', regions: ['gb', 'de'] });
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({
        title: 'Our free shipping',
        ends_at: '2031-01-01T00:00:00.000Z',
        regions: ['GB', 'DE'],
        edited_fields: ['title', 'ends_at', 'regions'],
      });
      const reset = await api.post(`/coupons/${ids.deal}`, { reset: ['title', 'regions'] });
      expect(reset.result).toMatchObject({ title: 'Free shipping on shoes', regions: [], edited_fields: ['ends_at'] });
      expect(((await api.get('/coupons?network=restcpn&edited=1')).result as Json[]).map((c) => c.id)).toEqual([ids.deal]);
    });

    it('refuses bad edits with clear errors', async () => {
      expect((await api.post(`/coupons/${ids.code}`, {})).statusCode).toBe(400);
      const unknown = await api.post(`/coupons/${ids.code}`, { colour: 'red' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.result).toMatchObject({ code: 'rest_invalid_param' });
      expect((await api.post(`/coupons/${ids.code}`, { ends_at: '2031-01-01 10:00' })).statusCode).toBe(400);
      expect((await api.post(`/coupons/${ids.code}`, { reset: ['price'] })).statusCode).toBe(400);
      const both = await api.post(`/coupons/${ids.code}`, { title: 'x', reset: ['title'] });
      expect(both.statusCode).toBe(400);
      expect(both.result).toMatchObject({ code: 'svc_invalid_coupon' });
      const script = await api.post(`/coupons/${ids.code}`, { landing_url: 'javascript:alert(1)' });
      expect(script.result).toMatchObject({ code: 'svc_invalid_coupon', data: { status: 400 } });
      expect((await api.post('/coupons/99999999', { title: 'x' })).statusCode).toBe(404);
    });

    it('reverts an AI rewrite once, then answers 409 svc_nothing_to_revert', async () => {
      const { ctx } = use();
      await ctx.coupons.applyRewrite(ids.code, { title: 'A rewritten title', description: 'Rewritten words' }, { actor: 'ai', model: 'test-model' });
      expect(((await api.get('/coupons?network=restcpn&ai=1')).result as Json[]).map((c) => c.id)).toEqual([ids.code]);
      const res = await api.post(`/coupons/${ids.code}/revert`, {});
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({ title: 'Alpha winter sale', description: 'On everything', ai_fields: [], original: null });
      const again = await api.post(`/coupons/${ids.code}/revert`, {});
      expect(again.statusCode).toBe(409);
      expect(again.result).toMatchObject({ code: 'svc_nothing_to_revert' });
    });

    it('starts a refresh job (202) and answers 409 while one is under way', async () => {
      source.pages = [[networkCoupon(1)]];
      const res = await api.post('/coupons/refresh', { network: 'restcpn' });
      expect(res.statusCode).toBe(202);
      expect(res.result).toMatchObject({ type: 'coupons.refresh', status: 'queued', params: { network: 'restcpn' } });
      const busy = await api.post('/coupons/refresh', { force: true });
      expect(busy.statusCode).toBe(409);
      expect(busy.result).toMatchObject({ code: 'svc_job_already_running' });
      await use().ctx.jobs.cancel((res.result as Json).id, 'test');
      expect((await api.post('/coupons/refresh', { network: 'nosuch' })).statusCode).toBe(404);
    });

    it("gives a member's link for a coupon", async () => {
      const { ctx } = use();
      const now = new Date();
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, domain, status, created_at, updated_at) VALUES ('restcpn', '9', 'Alpha', 'shop.example', 'active', ?, ?)",
        [now, now],
      );
      const member = await ctx.users.create({ login: 'restcoupons', email: 'rc@example.test', role: 'member' }, 'test');
      const res = await api.get(`/coupons/${ids.code}/link?member=restcoupons`);
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({
        coupon: ids.code,
        code: 'WINTER',
        deeplink: true,
        member: { id: member.id },
        url: expect.stringContaining(encodeURIComponent('https://shop.example/sale')),
      });
      expect((await api.get(`/coupons/${ids.code}/link`)).statusCode).toBe(400);
      expect((await api.get(`/coupons/${ids.old}/link?member=restcoupons`)).result).toMatchObject({ code: 'svc_coupon_unavailable' });
    });
  },
  {},
  { networkModules: [couponModule('restcpn', source)] },
);
