// Clicks end to end in one process: the link routes answer a signed /go/ link beside the direct
// link, /go/ stores the click and redirects to Awin's tracking link (the fixture's network) with
// the click id in clickref and the member in clickref2, and the order Awin then reports with that
// click id, by poll and by postback, credits the click's member and records the click. Refusals:
// forged, tampered, expired, malformed tokens, a removed advertiser, a deep link off the shop's
// domain: a 404 page, never a redirect, and no click.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { ClickTokens } from '../../src/click-tokens.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { localUtc } from '../fixtures/networks/common.js';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { addAdvertiser, getPostback, query } from '../helpers/networks.js';

type Json = Record<string, any>;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) ClickTest/1.0';

describeEachDialect(
  'clicks through /go/',
  (use) => {
    let fixture: AwinFixture;
    let server: Server;
    let admin: Actor;
    let pbToken: string;
    const members: Record<string, number> = {};

    beforeAll(async () => {
      const { ctx } = use();
      fixture = await startAwinFixture({ programmes: 3 });
      server = await testServer(ctx);
      admin = await createActor(ctx, 'administrator');
      await ctx.networks.configure('awin', { ...fixture.settings } as Record<string, string>, 'test');
      await ctx.networks.enable('awin', 'test');
      pbToken = (await ctx.networks.rotatePostbackSecret('awin', 'test')).secret;
      await ctx.networks.setPostbacks('awin', true, 'test');
      await addAdvertiser(ctx, 'awin', '1001', 'Example Shoes');
      await addAdvertiser(ctx, 'awin', '1002', 'Example Hats');
      await ctx.db.execute("UPDATE advertisers SET domain = 'example-shoes.test' WHERE advertiser = '1001'");
      for (const login of ['alice', 'bob']) members[login] = (await ctx.users.create({ login, email: `${login}@example.com` })).id;
    });
    afterAll(async () => {
      await server?.stop();
      await fixture?.close();
    });

    const api = (url: string) => server.inject({ url: `${NS}${url}`, headers: { authorization: admin.authorization } });
    const post = (url: string, payload: unknown) =>
      server.inject({ method: 'POST', url: `${NS}${url}`, payload: payload as object, headers: { authorization: admin.authorization } });
    const go = (token: string, remoteAddress = '203.0.113.77') => server.inject({ url: `/go/${token}`, headers: { 'user-agent': UA }, remoteAddress });
    const clickCount = async () => Number((await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM clicks'))[0].n);
    const linkFor = async (member: string, advertiser = '1001', url?: string) => {
      const res = await api(`/advertisers/awin/${advertiser}/link?member=${member}${url ? `&url=${encodeURIComponent(url)}` : ''}`);
      expect(res.statusCode).toBe(200);
      return res.result as Json;
    };
    const clickThrough = async (member: string, url?: string) => {
      const link = await linkFor(member, '1001', url);
      const res = await go(link.go_token);
      expect(res.statusCode).toBe(302);
      const location = new URL(String(res.headers.location));
      return { link, location, clickId: location.searchParams.get('clickref')! };
    };
    const expectRefused = async (token: string) => {
      const before = await clickCount();
      const res = await go(token);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers.location).toBeUndefined();
      expect(res.payload).toContain('This link is not valid or has expired');
      expect(await clickCount()).toBe(before);
    };

    it('answers a signed /go/ link beside the direct link, and /go/ redirects to the tracking link with the click id', async () => {
      const link = await linkFor('alice', '1001', 'https://www.example-shoes.test/trainers');
      expect(link).toMatchObject({ sub_id: String(members.alice), deeplink: true, target: 'https://www.example-shoes.test/trainers' });
      expect(link.go_url).toBe(`https://cash.example/go/${link.go_token}`);
      expect(Date.parse(link.go_expires_at)).toBeGreaterThan(Date.now());
      const res = await go(link.go_token);
      expect(res.statusCode).toBe(302);
      expect(res.headers['cache-control']).toBe('no-store');
      const location = new URL(String(res.headers.location));
      expect(location.pathname).toBe('/cread.php');
      const clickId = location.searchParams.get('clickref')!;
      expect(clickId).toMatch(/^c[0-9a-v]{18}$/);
      expect(location.searchParams.get('clickref2')).toBe(String(members.alice));
      expect(location.searchParams.get('ued')).toBe('https://www.example-shoes.test/trainers');
      const click = (await api(`/clicks/${clickId}`)).result as Json;
      expect(click).toMatchObject({
        id: clickId,
        member: { id: members.alice, login: 'alice' },
        network: 'awin',
        advertiser: '1001',
        advertiser_name: 'Example Shoes',
        url: 'https://www.example-shoes.test/trainers',
        cashback_rule: { type: 'percent_commission', value: '50' },
        ip_prefix: '203.0.113.0/24',
        order_ids: [],
      });
      expect(click.ua_hash).toMatch(/^[0-9a-f]{32}$/);
      // Never the raw address or user agent.
      const [row] = await use().ctx.db.select<Json>('SELECT * FROM clicks WHERE id = ?', [clickId]);
      expect(JSON.stringify(row)).not.toContain('203.0.113.77');
      expect(JSON.stringify(row)).not.toContain('ClickTest');
    });

    it('keeps an IPv6 client to its /48', async () => {
      const link = await linkFor('bob', '1002');
      const res = await go(link.go_token, '2001:db8:abcd:12:34::5');
      expect(res.statusCode).toBe(302);
      const id = new URL(String(res.headers.location)).searchParams.get('clickref')!;
      expect(((await api(`/clicks/${id}`)).result as Json).ip_prefix).toBe('2001:db8:abcd::/48');
    });

    it('counts a reload within seconds as the same click, another deep link as another', async () => {
      const link = await linkFor('bob', '1001', 'https://example-shoes.test/boots');
      const before = await clickCount();
      const first = await go(link.go_token);
      const again = await go(link.go_token);
      expect(again.headers.location).toBe(first.headers.location);
      expect(await clickCount()).toBe(before + 1);
      // Another token for the same member, shop and deep link is the same click too.
      const other = await linkFor('bob', '1001', 'https://example-shoes.test/boots');
      expect((await go(other.go_token)).headers.location).toBe(first.headers.location);
      expect(await clickCount()).toBe(before + 1);
      await clickThrough('bob', 'https://example-shoes.test/sandals');
      expect(await clickCount()).toBe(before + 2);
    });

    it('refuses forged, tampered, expired and malformed tokens with a 404 page', async () => {
      const { ctx } = use();
      const good = (await linkFor('alice')).go_token as string;
      const [payload, mac] = good.split('.');
      // A changed signature.
      await expectRefused(`${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`);
      // Another member in the payload under the first one's signature.
      const fields = JSON.parse(Buffer.from(payload, 'base64url').toString());
      fields[1] = members.bob;
      await expectRefused(`${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${mac}`);
      // Signed with another secret.
      const stranger = new ClickTokens({ key: Buffer.alloc(32, 7), clock: ctx.clock, selfUrl: { get: () => null }, ttlSeconds: 3600 });
      await expectRefused(stranger.link({ member_id: members.alice, network: 'awin', advertiser: '1001', coupon_id: null, url: null }).go_token);
      // Signed with the right key, expired.
      const past = new ClickTokens({
        key: ctx.keys.clickToken,
        clock: { now: () => new Date(Date.now() - 7200_000) },
        selfUrl: { get: () => null },
        ttlSeconds: 3600,
      });
      await expectRefused(past.link({ member_id: members.alice, network: 'awin', advertiser: '1001', coupon_id: null, url: null }).go_token);
      for (const bad of ['x', 'a.b', `${payload}`, `${payload}.${mac}.x`, 'A'.repeat(5000)]) await expectRefused(bad);
    });

    it('refuses a token whose deep link is off the shop, or whose shop or member is gone', async () => {
      const { ctx } = use();
      const tokens = new ClickTokens({ key: ctx.keys.clickToken, clock: ctx.clock, selfUrl: { get: () => null }, ttlSeconds: 3600 });
      const sign = (over: Json) => tokens.link({ member_id: members.alice, network: 'awin', advertiser: '1001', coupon_id: null, url: null, ...over }).go_token;
      // The link route refuses an off-domain deep link outright ...
      const res = await api(`/advertisers/awin/1001/link?member=alice&url=${encodeURIComponent('https://evil.example/')}`);
      expect(res.statusCode).toBe(400);
      expect((res.result as Json).code).toBe('svc_invalid_url');
      // ... and /go/ checks it again at the click: no open redirect, even with a signed token.
      await expectRefused(sign({ url: 'https://evil.example/phish' }));
      await expectRefused(sign({ url: 'https://example-shoes.test.evil.example/' }));
      await expectRefused(sign({ url: 'javascript:alert(1)' }));
      await expectRefused(sign({ member_id: 999_999 }));
      await expectRefused(sign({ advertiser: 'no-such-shop' }));
      await addAdvertiser(ctx, 'awin', '1003', 'Gone Shop');
      const gone = sign({ advertiser: '1003' });
      await ctx.db.execute("DELETE FROM advertisers WHERE module = 'awin' AND advertiser = '1003'");
      await expectRefused(gone);
    });

    it('answers the coupon link with a /go/ link that records the coupon', async () => {
      const { ctx } = use();
      const now = new Date();
      await ctx.db.execute(
        "INSERT INTO coupons (network, advertiser, coupon_id, code, title, landing_url, status, created_at, updated_at) VALUES ('awin', '1001', 'P-1', 'RUN15', '15% off', 'https://example-shoes.test/sale', 'active', ?, ?)",
        [now, now],
      );
      const [{ id }] = await ctx.db.select<{ id: unknown }>("SELECT id FROM coupons WHERE coupon_id = 'P-1'");
      const res = await api(`/coupons/${id}/link?member=alice`);
      expect(res.statusCode).toBe(200);
      const link = res.result as Json;
      expect(link).toMatchObject({ coupon: Number(id), deeplink: true, go_url: expect.stringContaining('/go/') });
      const clicked = await go(link.go_token);
      const clickId = new URL(String(clicked.headers.location)).searchParams.get('clickref')!;
      expect((await api(`/clicks/${clickId}`)).result as Json).toMatchObject({ coupon_id: Number(id), url: 'https://example-shoes.test/sale' });
      expect(((await api(`/clicks?coupon_id=${id}`)).result as Json[]).map((c) => c.id)).toEqual([clickId]);
    });

    it("credits the click's member for an order Awin reports with the click id, by poll", async () => {
      const { ctx } = use();
      const { clickId } = await clickThrough('alice');
      const at = new Date(Date.now() - 3_600_000);
      fixture.transactions.push({
        id: 777_001,
        advertiserId: 1001,
        publisherId: Number(fixture.publisherId),
        commissionStatus: 'pending',
        commissionAmount: { amount: 4, currency: 'GBP' },
        saleAmount: { amount: 80, currency: 'GBP' },
        clickRefs: { clickRef: clickId, clickRef2: String(members.alice) },
        clickDate: localUtc(new Date(at.getTime() - 60_000)),
        transactionDate: localUtc(at),
        orderRef: 'ORD-777001',
        type: 'Commission group transaction',
      });
      const queued = await ctx.jobs.enqueue('orders.poll', { network: 'awin', since: new Date(Date.now() - 2 * 86_400_000) }, 'test');
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      expect((await ctx.jobs.get(queued.id)).status).toBe('done');
      const [row] = await ctx.db.select<{ id: unknown }>("SELECT id FROM orders WHERE network = 'awin' AND transaction_id = '777001'");
      const order = (await api(`/orders/${Number(row.id)}`)).result as Json;
      expect(order).toMatchObject({ member: { id: members.alice }, click_id: clickId, sub_id: clickId, cashback: '2.00' });
      expect(((await api(`/clicks/${clickId}`)).result as Json).order_ids).toEqual([order.id]);
      expect(await ctx.ledger.balanceOf(members.alice, 'GBP')).toMatchObject({ pending: '2.00' });
    });

    it("credits the click's member for an order Awin notifies with the click id, by postback", async () => {
      const { ctx } = use();
      const { clickId } = await clickThrough('bob');
      const sent = await getPostback(
        server,
        'awin',
        query({
          token: pbToken,
          transactionId: '777002',
          transactionDate: localUtc(new Date(Date.now() - 60_000), ' '),
          transactionAmount: '50.00',
          transactionCurrency: 'GBP',
          commission: '5.00',
          merchantId: '1001',
          clickRef: clickId,
        }),
      );
      expect(sent.status).toBe(200);
      const order = await ctx.orders.get(sent.body.order_id);
      expect(order).toMatchObject({ member: { id: members.bob }, click_id: clickId, cashback: '2.50' });
      // A sub id that is no click on file keeps today's matching: unmatched.
      const unknown = await getPostback(
        server,
        'awin',
        query({
          token: pbToken,
          transactionId: '777003',
          transactionAmount: '10.00',
          transactionCurrency: 'GBP',
          commission: '1.00',
          merchantId: '1001',
          clickRef: 'c0000000000aaaaaaaa',
        }),
      );
      expect(await ctx.orders.get(unknown.body.order_id)).toMatchObject({ member: null, click_id: null });
    });

    it('gives an order whose click id is not on file the member of the fallback field, without a click, by postback and by poll', async () => {
      const { ctx } = use();
      const pruned = 'c0000000001bbbbbbbb';
      const notify = (transactionId: string, refs: Record<string, string>) =>
        getPostback(
          server,
          'awin',
          query({
            token: pbToken,
            transactionId,
            transactionAmount: '40.00',
            transactionCurrency: 'GBP',
            commission: '4.00',
            merchantId: '1001',
            ...refs,
          }),
        );
      // By postback: the unknown click id with bob in clickRef2.
      const sent = await notify('777201', { clickRef: pruned, clickRef2: String(members.bob) });
      expect(sent.status).toBe(200);
      expect(await ctx.orders.get(sent.body.order_id)).toMatchObject({ member: { id: members.bob }, click_id: null, sub_id: pruned, cashback: '2.00' });
      // A fallback naming no member, or one that is not a member id, leaves the order unmatched.
      const nobody = await notify('777202', { clickRef: pruned, clickRef2: '999999' });
      expect(await ctx.orders.get(nobody.body.order_id)).toMatchObject({ member: null, click_id: null });
      const word = await notify('777203', { clickRef: pruned, clickRef2: 'bob' });
      expect(await ctx.orders.get(word.body.order_id)).toMatchObject({ member: null, click_id: null });
      // The fallback is read only beside a click id: an old-style sub id keeps today's matching.
      const legacy = await notify('777204', { clickRef: 'no-such-login', clickRef2: String(members.bob) });
      expect(await ctx.orders.get(legacy.body.order_id)).toMatchObject({ member: null });
      // A click on file wins over the fallback field.
      const { clickId } = await clickThrough('alice');
      const both = await notify('777205', { clickRef: clickId, clickRef2: String(members.bob) });
      expect(await ctx.orders.get(both.body.order_id)).toMatchObject({ member: { id: members.alice }, click_id: clickId });

      // By poll: the same rule on the transactions API's clickRefs.
      const at = new Date(Date.now() - 3_600_000);
      fixture.transactions.push({
        id: 777_206,
        advertiserId: 1001,
        publisherId: Number(fixture.publisherId),
        commissionStatus: 'pending',
        commissionAmount: { amount: 6, currency: 'GBP' },
        saleAmount: { amount: 60, currency: 'GBP' },
        clickRefs: { clickRef: pruned, clickRef2: String(members.alice) },
        clickDate: localUtc(new Date(at.getTime() - 60_000)),
        transactionDate: localUtc(at),
        orderRef: 'ORD-777206',
        type: 'Commission group transaction',
      });
      const queued = await ctx.jobs.enqueue('orders.poll', { network: 'awin', since: new Date(Date.now() - 2 * 86_400_000) }, 'test');
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      expect((await ctx.jobs.get(queued.id)).status).toBe('done');
      const [row] = await ctx.db.select<{ id: unknown }>("SELECT id FROM orders WHERE network = 'awin' AND transaction_id = '777206'");
      expect(await ctx.orders.get(Number(row.id))).toMatchObject({ member: { id: members.alice }, click_id: null, sub_id: pruned, cashback: '3.00' });
      expect(await ctx.ledger.verify()).toEqual([]);
    });

    it('lists clicks with filters, paging and sort, and 404s an unknown click', async () => {
      const all = await api('/clicks?per_page=100');
      expect(all.statusCode).toBe(200);
      const items = all.result as Json[];
      expect(Number(all.headers['x-wp-total'])).toBe(items.length);
      expect(items.length).toBeGreaterThan(3);
      const times = items.map((c) => c.created_at);
      expect([...times].sort().reverse()).toEqual(times);
      const bobs = (await api(`/clicks?member_id=${members.bob}`)).result as Json[];
      expect(bobs.length).toBeGreaterThan(0);
      expect(bobs.every((c) => c.member.id === members.bob)).toBe(true);
      const hats = (await api('/clicks?network=awin&advertiser=1002')).result as Json[];
      expect(hats.map((c) => c.advertiser)).toEqual(['1002']);
      const asc = (await api('/clicks?orderby=created_at&order=asc&per_page=2&page=1')).result as Json[];
      expect(asc.map((c) => c.id)).toEqual(
        items
          .slice(-2)
          .reverse()
          .map((c) => c.id),
      );
      const future = (await api(`/clicks?after=${new Date(Date.now() + 60_000).toISOString()}`)).result as Json[];
      expect(future).toEqual([]);
      expect((await api('/clicks/c0000000000aaaaaaaa')).statusCode).toBe(404);
      expect(((await api('/clicks/c0000000000aaaaaaaa')).result as Json).code).toBe('svc_click_not_found');
      expect((await api('/clicks/not-a-click')).statusCode).toBe(400);
      expect((await api('/clicks?orderby=member')).statusCode).toBe(400);
    });

    it('assigns an unmatched order with a candidate click, and refuses a click of another member or shop', async () => {
      const { ctx } = use();
      const { clickId } = await clickThrough('alice', 'https://example-shoes.test/last');
      const order = await ctx.orders.record(
        {
          network: 'awin',
          transaction_id: '777100',
          advertiser: '1001',
          status: 'pending',
          sale_amount: '20.00',
          commission: '2.00',
          currency: 'GBP',
          source: 'postback',
        },
        'postback',
      );
      expect(order.member).toBeNull();
      const candidates = (await api(`/orders/${order.id}/candidates`)).result as Json;
      expect(candidates.items[0]).toMatchObject({ member: { id: members.alice }, click: { id: clickId } });
      const wrong = await post(`/orders/${order.id}/assign`, { member_id: members.bob, click_id: clickId });
      expect(wrong.statusCode).toBe(409);
      expect((wrong.result as Json).code).toBe('svc_click_mismatch');
      const missing = await post(`/orders/${order.id}/assign`, { click_id: 'c0000000000aaaaaaaa' });
      expect(missing.statusCode).toBe(404);
      const ok = await post(`/orders/${order.id}/assign`, { click_id: clickId });
      expect(ok.statusCode).toBe(200);
      expect(await ctx.orders.get(order.id)).toMatchObject({ member: { id: members.alice }, click_id: clickId });
      const hats = await ctx.orders.record(
        {
          network: 'awin',
          transaction_id: '777101',
          advertiser: '1002',
          status: 'pending',
          sale_amount: '20.00',
          commission: '2.00',
          currency: 'GBP',
          source: 'postback',
        },
        'postback',
      );
      const other = await post(`/orders/${hats.id}/assign`, { member_id: members.alice, click_id: clickId });
      expect(other.statusCode).toBe(409);
      expect((other.result as Json).code).toBe('svc_click_mismatch');
      expect((await post(`/orders/${hats.id}/assign`, {})).statusCode).toBe(400);
      expect(await ctx.ledger.verify()).toEqual([]);
    });
  },
  { 'postbacks.enabled': true, 'server.public_url': 'https://cash.example' },
);
