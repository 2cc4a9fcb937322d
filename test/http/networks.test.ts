import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { fakeModule, getPostback, query, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect(
  'networks over REST',
  (use) => {
    let server: Server;
    let admin: Actor;
    beforeAll(async () => {
      server = await testServer(use().ctx);
      admin = await createActor(use().ctx, 'administrator');
    });
    afterAll(() => server.stop());

    const get = (url: string) => server.inject({ url: `${NS}${url}`, headers: { authorization: admin.authorization } });
    const post = (url: string, payload: unknown) =>
      server.inject({ method: 'POST', url: `${NS}${url}`, payload: payload as object, headers: { authorization: admin.authorization } });

    it('configures a built-in network: values shown, secrets only as *_set, stored encrypted', async () => {
      const { ctx } = use();
      const network = await ctx.networks.configure('fakenet', { publisherId: '4242', apiToken: 'tok-SECRET-value-123' }, 'test');
      expect(network).toMatchObject({ configured: true, settings: { publisherId: '4242', apiToken_set: true } });
      expect((await ctx.networks.settings('fakenet')).apiToken).toBe('tok-SECRET-value-123');
      const [row] = await ctx.db.select<Json>("SELECT settings, secret_settings FROM networks WHERE id = 'fakenet'");
      expect(JSON.stringify(row)).not.toContain('tok-SECRET-value-123');
      const res = await get('/networks/fakenet');
      expect(res.statusCode).toBe(200);
      expect(res.payload).not.toContain('tok-SECRET-value-123');
      expect((await get('/networks')).payload).not.toContain('tok-SECRET-value-123');
      await expect(ctx.networks.configure('fakenet', { accessKey: 'x' }, 'test')).rejects.toMatchObject({ code: 'svc_unknown_setting', status: 400 });
      await expect(ctx.networks.configure('fakenet', { publisherId: 'a\nb' }, 'test')).rejects.toMatchObject({ code: 'svc_invalid_setting' });
      const unset = await ctx.networks.configure('fakenet', { apiToken: null }, 'test');
      expect(unset).toMatchObject({ configured: false, settings: { apiToken_set: false } });
      await ctx.networks.configure('fakenet', { apiToken: 'tok-2' }, 'test');
    });

    it('switches a network on and off and keeps the last sync outcome', async () => {
      const { ctx } = use();
      expect((await ctx.networks.enable('fakenet', 'test')).enabled).toBe(true);
      await ctx.networks.recordSync('fakenet', {
        at: new Date('2026-11-20T10:00:00Z'),
        result: { created: 3, updated: 1, deactivated: 0, failed: 0 },
        error: 'page 4: HTTP 500',
      });
      const n = await ctx.networks.get('fakenet');
      expect(n).toMatchObject({
        enabled: true,
        last_sync_at: '2026-11-20T10:00:00.000Z',
        last_sync_result: { created: 3 },
        last_error: 'page 4: HTTP 500',
        last_error_at: '2026-11-20T10:00:00.000Z',
      });
      expect((await ctx.networks.disable('fakenet', 'test')).enabled).toBe(false);
    });

    it("keeps the sync's and the poll's outcomes side by side, whichever ends last", async () => {
      const { ctx } = use();
      await Promise.all([
        ctx.networks.recordRun('fakenet', 'advertisers', { created: 2, failed: 0 }, null),
        ctx.networks.recordRun('fakenet', 'orders', { seen: 5, failed: 1 }, 'page 2: HTTP 502'),
      ]);
      const n = await ctx.networks.get('fakenet');
      expect(n.last_sync_result).toMatchObject({
        advertisers: { created: 2, failed: 0, error: null, at: expect.any(String) },
        orders: { seen: 5, failed: 1, error: 'page 2: HTTP 502', at: expect.any(String) },
      });
      expect(n.last_error).toBe('page 2: HTTP 502');
      await ctx.networks.recordRun('fakenet', 'orders', { seen: 6, failed: 0 }, null);
      // The poll's own outcome says it recovered; last_error keeps the latest error and its time.
      const after = await ctx.networks.get('fakenet');
      expect(after.last_sync_result).toMatchObject({ advertisers: { created: 2, error: null }, orders: { seen: 6, failed: 0, error: null } });
      expect(after).toMatchObject({ last_error: 'page 2: HTTP 502', last_error_at: n.last_error_at });
    });

    it('refuses to define a built-in network (409 svc_network_not_custom)', async () => {
      const res = await post('/networks/fakenet', shopnetDefinition());
      expect(res.statusCode).toBe(409);
      expect(res.result).toMatchObject({ code: 'svc_network_not_custom', data: { status: 409, network: 'fakenet' } });
    });

    it.each([
      ['no name', { name: undefined }, 'rest_missing_callback_param', ['name']],
      ['a status mapped to a word we lack', { statuses: { paid: 'settled' } }, 'rest_invalid_param', 'statuses'],
      ['a mapping without a transaction id', { postback: { params: { commission: 'payout' } } }, 'rest_invalid_param', 'postback'],
      ['a bad parameter name', { postback: { params: { transaction_id: 'tx id', commission: 'c' } } }, 'rest_invalid_param', 'postback'],
      [
        'a feed in another format',
        { feeds: { advertisers: { url: 'https://x.test/a.xml', format: 'xml', fields: { id: 'id', name: 'name' } } } },
        'rest_invalid_param',
        'feeds',
      ],
    ])('refuses a definition with %s (400 %s)', async (_name, over, code, param) => {
      const res = await post('/networks/badnet', shopnetDefinition(over));
      expect(res.statusCode).toBe(400);
      expect((res.result as Json).code).toBe(code);
      const params = (res.result as Json).data.params;
      expect(Array.isArray(params) ? params : Object.keys(params)).toContain(Array.isArray(param) ? param[0] : param);
    });

    it.each([
      ['a tracking link without {sub_id}', { tracking_link: 'https://go.test/c?url={url}' }, 'tracking_link', /\{sub_id\}/],
      ['an unknown placeholder', { tracking_link: 'https://go.test/c?s={sub_id}&x={member}' }, 'tracking_link', /unknown placeholder \{member\}/],
      [
        'a secret setting in the tracking link',
        { settings: [{ name: 'key', secret: true }], tracking_link: 'https://go.test/c?s={sub_id}&k={settings.key}' },
        'tracking_link',
        /secret/,
      ],
      ['a tracking link that is not http', { tracking_link: 'javascript:alert({sub_id})' }, 'tracking_link', /http/],
      ['one parameter for two fields', { postback: { params: { transaction_id: 'id', commission: 'ID' } } }, 'postback[params][commission]', /already mapped/],
      ['the reserved token parameter', { postback: { params: { transaction_id: 'token', commission: 'c' } } }, 'postback[params][transaction_id]', /reserved/],
      ['status words that differ only in case', { statuses: { Paid: 'approved', paid: 'declined' } }, 'statuses[paid]', /only in case/],
      ['an unknown currency', { currency: 'ABC' }, 'currency', /unknown currency/],
      ['a percent over 100', { cashback: { type: 'percent_sale', value: '150' } }, 'cashback[value]', /100/],
      [
        'a feed URL with an unknown placeholder',
        { feeds: { transactions: { url: 'https://x.test/t.csv?k={settings.nope}', format: 'csv', fields: { transaction_id: 'id', commission: 'c' } } } },
        'feeds[transactions][url]',
        /settings\.nope/,
      ],
      [
        'a secret setting sent over plain http in the URL',
        {
          settings: [{ name: 'key', secret: true }],
          feeds: { advertisers: { url: 'http://feeds.example.test/{settings.key}/a.json', format: 'json', fields: { id: 'id', name: 'name' } } },
        },
        'feeds[advertisers][url]',
        /\{settings\.key\}.*https/,
      ],
      [
        'a secret setting sent over plain http in a header',
        {
          settings: [{ name: 'key', secret: true }],
          feeds: {
            transactions: {
              url: 'http://10.0.0.8/t.csv',
              format: 'csv',
              headers: { Authorization: 'Token {settings.key}' },
              fields: { transaction_id: 'id', commission: 'c' },
            },
          },
        },
        'feeds[transactions][url]',
        /https/,
      ],
    ])('refuses a definition with %s (400 svc_invalid_network naming the field)', async (_name, over, field, message) => {
      const res = await post('/networks/badnet', shopnetDefinition(over));
      expect(res.statusCode).toBe(400);
      expect(res.result).toMatchObject({ code: 'svc_invalid_network', data: { status: 400 } });
      expect((res.result as Json).data.params[field]).toMatch(message);
      expect((await get('/networks/badnet')).statusCode).toBe(404);
    });

    it('builds tracking links from the template with the target URL encoded', async () => {
      await use().ctx.networks.saveCustom('tracknet', shopnetDefinition(), 'test');
      const module = await use().ctx.networks.module('tracknet');
      expect(module.trackingLink({}, { advertiser_id: 'shop 7', sub_id: '42', url: 'https://shop.test/p?a=1&b=2' })).toBe(
        'https://go.shopnet.test/c/shop%207?aff=77&subid=42&url=https%3A%2F%2Fshop.test%2Fp%3Fa%3D1%26b%3D2',
      );
      await use().ctx.networks.saveCustom(
        'linknet',
        shopnetDefinition({ settings: [{ name: 'aff', required: true }], tracking_link: 'https://go.test/{settings.aff}/{advertiser_id}?s={sub_id}&u={url}' }),
        'test',
      );
      const n = await use().ctx.networks.get('linknet');
      expect(n.configured).toBe(false);
      await use().ctx.networks.configure('linknet', { aff: 'A 1' }, 'test');
      expect(
        (await use().ctx.networks.module('linknet')).trackingLink(await use().ctx.networks.settings('linknet'), {
          advertiser_id: '9',
          sub_id: 'ann',
          url: null,
        }),
      ).toBe('https://go.test/A%201/9?s=ann');
    });

    it('counts orders per network and answers 404/400 for unknown or malformed ids', async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('countnet', shopnetDefinition(), 'test');
      await ctx.orders.record(
        { network: 'countnet', transaction_id: 'N-1', source: 'manual', sale_amount: '10.00', commission: '1.00', currency: 'EUR', note: 'x' },
        'test',
      );
      expect((await ctx.networks.get('countnet')).counts.orders).toBe(1);
      expect(((await get('/networks')).result as Json[]).find((n) => n.id === 'countnet')!.counts.orders).toBe(1);
      const missing = await get('/networks/nonet');
      expect(missing.statusCode).toBe(404);
      expect((missing.result as Json).code).toBe('svc_network_not_found');
      expect((await get('/networks/Bad%20Id')).statusCode).toBe(400);
      expect((await server.inject({ url: `${NS}/networks` })).statusCode).toBe(401);
    });

    it('never returns a postback secret', async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('secretnet', shopnetDefinition(), 'test');
      const { secret } = await ctx.networks.rotatePostbackSecret('secretnet', 'test');
      const hmac = await ctx.networks.rotatePostbackSecret('fakenet', 'test', { mode: 'hmac' });
      for (const url of ['/networks', '/networks/secretnet', '/networks/fakenet']) {
        const res = await get(url);
        expect(res.payload).not.toContain(secret);
        expect(res.payload).not.toContain(hmac.secret);
      }
      const [row] = await ctx.db.select<Json>("SELECT postback_secret FROM networks WHERE id = 'fakenet'");
      expect(row.postback_secret).toMatch(/^e1:/);
      expect(row.postback_secret).not.toContain(hmac.secret);
      const [tokenRow] = await ctx.db.select<Json>("SELECT postback_secret FROM networks WHERE id = 'secretnet'");
      expect(tokenRow.postback_secret).toMatch(/^h1:[0-9a-f]{64}$/);
    });

    it('pages the networks, built-in then custom by id, with X-WP-Total, X-WP-TotalPages and Link', async () => {
      for (const id of ['pg-c', 'pg-a', 'pg-b'])
        expect((await post(`/networks/${id}`, shopnetDefinition({ name: `Paged ${id}` }))).statusCode).toBeLessThan(300);
      const all = await get('/networks?per_page=100');
      const ids = (all.result as Json[]).map((n) => n.id as string);
      const kinds = (all.result as Json[]).map((n) => n.kind as string);
      expect(ids[0]).toBe('fakenet');
      expect(kinds.lastIndexOf('builtin')).toBeLessThan(kinds.indexOf('custom'));
      const custom = ids.filter((_, i) => kinds[i] === 'custom');
      expect(custom).toEqual([...custom].sort());
      expect(custom).toEqual(expect.arrayContaining(['pg-a', 'pg-b', 'pg-c']));
      expect(Number(all.headers['x-wp-total'])).toBe(ids.length);
      const walked: string[] = [];
      const pages = Math.ceil(ids.length / 2);
      for (let page = 1; page <= pages; page++) {
        const res = await get(`/networks?per_page=2&page=${page}`);
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-wp-total']).toBe(String(ids.length));
        expect(res.headers['x-wp-totalpages']).toBe(String(pages));
        if (page < pages) expect(String(res.headers.link)).toContain('rel="next"');
        walked.push(...(res.result as Json[]).map((n) => n.id as string));
      }
      expect(walked).toEqual(ids);
      const customOnly = await get('/networks?kind=custom&per_page=1&page=2');
      expect((customOnly.result as Json[]).map((n) => n.id)).toEqual([custom[1]]);
      expect(customOnly.headers['x-wp-total']).toBe(String(custom.length));
      const past = await get(`/networks?per_page=2&page=${pages + 1}`);
      expect(past.statusCode).toBe(400);
      expect(past.result).toMatchObject({ code: 'rest_invalid_page_number', data: { total: ids.length, total_pages: pages } });
      expect((await get('/networks?per_page=101')).result).toMatchObject({ code: 'rest_invalid_param' });
    });
  },
  { networks: { fakenet: { region: 'eu' } } },
  { networkModules: [fakeModule()] },
);

// A database of its own: what "before anything is configured" looks like cannot depend on
// whether the tests above have run.
describeEachDialect(
  'networks over REST on a fresh database',
  (use) => {
    const { get } = adminClient(use);

    it('lists the built-in networks with their state before anything is configured', async () => {
      const res = await get('/networks');
      expect(res.statusCode).toBe(200);
      const [fake] = res.result as Json[];
      expect(fake).toMatchObject({
        id: 'fakenet',
        kind: 'builtin',
        name: 'Fake Net',
        currency: 'USD',
        enabled: false,
        configured: false,
        settings: { apiToken_set: false },
        cashback_rule: { type: 'percent_commission', value: '50', source: 'default' },
        definition: null,
        postbacks: { enabled: false, mode: 'token', secret_set: false, ip_allowlist: [], url: null, template: expect.stringContaining('tid=') },
        last_sync_at: null,
        last_sync_result: null,
        last_error: null,
        counts: { advertisers: 0, orders: 0 },
      });
      expect(fake.settings).toEqual({ region: 'eu', apiToken_set: false });
      expect(fake.config_keys.map((k: Json) => [k.name, k.secret])).toEqual([
        ['publisherId', false],
        ['apiToken', true],
        ['region', false],
        ['review_above', false],
        ['payment_terms_days', false],
        ['cashback_payable', false],
      ]);
    });
  },
  { networks: { fakenet: { region: 'eu' } } },
  { networkModules: [fakeModule()] },
);

// A database of its own: the test lists every custom network, and the tests above save theirs.
describeEachDialect(
  'custom networks over REST on a database of their own',
  (use) => {
    const { get, post } = adminClient(use);

    it('creates a custom network (201), updates it (200), and sets its cashback rule from the definition', async () => {
      const created = await post('/networks/shopnet', shopnetDefinition());
      expect(created.statusCode).toBe(201);
      expect(created.result).toMatchObject({
        id: 'shopnet',
        kind: 'custom',
        name: 'Shop Net',
        currency: 'EUR',
        enabled: true,
        configured: true,
        cashback_rule: { type: 'percent_commission', value: '50', source: 'network' },
        definition: {
          name: 'Shop Net',
          cashback: { type: 'percent_commission', value: '50', currency: null },
          postback: { params: { transaction_id: 'txn' } },
        },
        postbacks: { enabled: false, template: expect.stringContaining('txn={transaction_id}') },
      });
      const updated = await post('/networks/shopnet', shopnetDefinition({ name: 'Shop Net 2', cashback: { type: 'flat', value: '2.5' } }));
      expect(updated.statusCode).toBe(200);
      expect(updated.result).toMatchObject({ name: 'Shop Net 2', cashback_rule: { type: 'flat', value: '2.50', currency: 'EUR', source: 'network' } });
      // An update that leaves `cashback` out keeps the rule; null clears it to the site default.
      const { cashback: _c, ...without } = shopnetDefinition();
      const kept = await post('/networks/shopnet', without);
      expect((kept.result as Json).cashback_rule).toMatchObject({ type: 'flat', value: '2.50', source: 'network' });
      const noRule = await post('/networks/shopnet', { ...without, cashback: null });
      expect((noRule.result as Json).cashback_rule.source).toBe('default');
      expect((noRule.result as Json).definition.cashback).toBeNull();
      const listed = (await get('/networks?kind=custom')).result as Json[];
      expect(listed.map((n) => n.id)).toEqual(['shopnet']);
    });
  },
  { networks: { fakenet: { region: 'eu' } } },
  { networkModules: [fakeModule()] },
);

describeEachDialect(
  'setting up a network entirely over REST',
  (use) => {
    const client = adminClient(use);
    const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => client.post(url, payload, headers);

    it("sets a custom network's secret setting over REST, write-only: stored, used, never returned", async () => {
      const { ctx } = use();
      const defined = await post('/networks/feednet', shopnetDefinition({ settings: [{ name: 'api_key', secret: true, required: true }, { name: 'region' }] }));
      expect(defined.statusCode).toBe(201);
      expect((defined.result as Json).configured).toBe(false);
      const res = await post('/networks/feednet/settings', { settings: { api_key: 'feed-SECRET-key-42', region: 'eu' } });
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({ id: 'feednet', configured: true, settings: { region: 'eu', api_key_set: true } });
      expect(res.payload).not.toContain('feed-SECRET-key-42');
      expect((await ctx.networks.settings('feednet')).api_key).toBe('feed-SECRET-key-42');
      expect((await client.get('/networks/feednet')).payload).not.toContain('feed-SECRET-key-42');
      const [row] = await ctx.db.select<Json>("SELECT settings, secret_settings FROM networks WHERE id = 'feednet'");
      expect(JSON.stringify(row)).not.toContain('feed-SECRET-key-42');
      // null removes a setting; names the network does not have, and bad bodies, are refused.
      const unset = await post('/networks/feednet/settings', { settings: { region: null } });
      expect(unset.result).toMatchObject({ settings: { api_key_set: true } });
      expect((unset.result as Json).settings.region).toBeUndefined();
      expect((await post('/networks/feednet/settings', { settings: { colour: 'blue' } })).result).toMatchObject({ code: 'svc_unknown_setting' });
      expect((await post('/networks/feednet/settings', { settings: {} })).result).toMatchObject({ code: 'rest_invalid_param' });
      expect((await post('/networks/feednet/settings', {})).result).toMatchObject({ code: 'rest_missing_callback_param' });
      expect((await post('/networks/nosuchnet/settings', { settings: { a: 'b' } })).statusCode).toBe(404);
      // Administrators only, as every network route.
      const member = await createActor(ctx, 'member');
      const denied = await client.server.inject({
        method: 'POST',
        url: `${NS}/networks/feednet/settings`,
        payload: { settings: { api_key: 'x' } },
        headers: { authorization: member.authorization },
      });
      expect(denied.statusCode).toBe(403);
      expect((await ctx.networks.settings('feednet')).api_key).toBe('feed-SECRET-key-42');
    });

    it('switches postbacks on in one request: the secret a network lacks is made and shown once, and postbacks arrive', async () => {
      const { ctx } = use();
      expect((await post('/networks/pbnet', shopnetDefinition())).statusCode).toBe(201);
      const on = await post('/networks/pbnet/postback', { enabled: true, ip_allowlist: ['127.0.0.0/8'] });
      expect(on.statusCode).toBe(200);
      const body = on.result as Json;
      expect(body).toMatchObject({
        secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        switches: { global: true, network: true },
        message: null,
        network: { id: 'pbnet', postbacks: { enabled: true, secret_set: true, mode: 'token', ip_allowlist: ['127.0.0.0/8'] } },
      });
      const res = await getPostback(client.server, 'pbnet', query({ token: body.secret, txn: 'ONE-1', status: 'pending', amount: '10.00', payout: '1.00' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, status: 'pending' });
      // Switching on again keeps the secret and shows none; off is off.
      const again = await post('/networks/pbnet/postback', { enabled: true });
      expect(again.result).toMatchObject({ secret: null, network: { postbacks: { ip_allowlist: ['127.0.0.0/8'] } } });
      expect(again.payload).not.toContain(body.secret);
      const off = await post('/networks/pbnet/postback', { enabled: false, ip_allowlist: null });
      expect(off.result).toMatchObject({
        secret: null,
        switches: { global: true, network: false },
        network: { postbacks: { enabled: false, ip_allowlist: [] } },
      });
      expect((await getPostback(client.server, 'pbnet', query({ token: body.secret, txn: 'ONE-2', payout: '1.00' }))).status).toBe(403);
      expect((await ctx.networks.get('pbnet')).postbacks.secret_set).toBe(true);
      // A network without a mapping cannot be switched on, and gets no secret.
      expect((await post('/networks/mapless', shopnetDefinition({ postback: null }))).statusCode).toBe(201);
      expect((await post('/networks/mapless/postback', { enabled: true })).result).toMatchObject({ code: 'svc_postback_no_mapping' });
      expect((await ctx.networks.get('mapless')).postbacks.secret_set).toBe(false);
      expect((await post('/networks/pbnet/postback', { enabled: true, ip_allowlist: ['example.com'] })).result).toMatchObject({
        code: 'svc_invalid_ip_allowlist',
      });
      expect((await post('/networks/pbnet/postback', {})).result).toMatchObject({ code: 'rest_missing_callback_param' });
    });

    it('switches a network off and on over REST: a second switch to the same state changes nothing, and its postbacks keep their own switch', async () => {
      const { ctx } = use();
      expect((await post('/networks/swnet', shopnetDefinition())).statusCode).toBe(201);
      const secret = ((await post('/networks/swnet/postback', { enabled: true })).result as Json).secret as string;
      const off = await post('/networks/swnet/enabled', { enabled: false });
      expect(off.statusCode).toBe(200);
      expect(off.result).toMatchObject({ changed: true, network: { id: 'swnet', enabled: false, postbacks: { enabled: true } } });
      expect((await ctx.networks.get('swnet')).enabled).toBe(false);
      // Already off: 200, nothing written, nothing logged a second time.
      const again = await post('/networks/swnet/enabled', { enabled: false });
      expect(again.statusCode).toBe(200);
      expect(again.result).toMatchObject({ changed: false, network: { enabled: false } });
      await ctx.logger.flush();
      const [logged] = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM logs WHERE message = 'Network disabled' AND context LIKE '%swnet%'");
      expect(Number(logged!.n)).toBe(1);
      // A disabled network's postbacks are still accepted while their own switch is on.
      const pb = await getPostback(client.server, 'swnet', query({ token: secret, txn: 'SW-1', status: 'pending', amount: '10.00', payout: '1.00' }));
      expect(pb.status).toBe(200);
      expect((await post('/networks/swnet/enabled', { enabled: true })).result).toMatchObject({ changed: true, network: { enabled: true } });
      // The CLI's service methods are the same switch.
      expect((await ctx.networks.disable('swnet', 'test')).enabled).toBe(false);
      expect((await post('/networks/swnet/enabled', { enabled: false })).result).toMatchObject({ changed: false });
      // Unknown network, a malformed id, a missing or non-boolean body: defined refusals, nothing changes.
      expect((await post('/networks/nosuchnet/enabled', { enabled: true })).result).toMatchObject({ code: 'svc_network_not_found', data: { status: 404 } });
      expect((await post('/networks/Bad%20Id/enabled', { enabled: true })).statusCode).toBe(400);
      expect((await post('/networks/swnet/enabled', {})).result).toMatchObject({ code: 'rest_missing_callback_param' });
      expect((await post('/networks/swnet/enabled', { enabled: 'maybe' })).result).toMatchObject({ code: 'rest_invalid_param' });
      expect((await ctx.networks.get('swnet')).enabled).toBe(false);
      // Administrators only.
      const member = await createActor(ctx, 'member');
      const denied = await client.server.inject({
        method: 'POST',
        url: `${NS}/networks/swnet/enabled`,
        payload: { enabled: true },
        headers: { authorization: member.authorization },
      });
      expect(denied.statusCode).toBe(403);
      expect((await ctx.networks.get('swnet')).enabled).toBe(false);
    });
  },
  { 'postbacks.enabled': true },
);

describeEachDialect('switching postbacks on while the global switch is off', (use) => {
  const client = adminClient(use);

  it('switches the network on and names the global switch that is still off', async () => {
    expect((await client.post('/networks/offnet', shopnetDefinition())).statusCode).toBe(201);
    const on = await client.post('/networks/offnet/postback', { enabled: true });
    expect(on.statusCode).toBe(200);
    expect(on.result).toMatchObject({
      secret: expect.any(String),
      switches: { global: false, network: true },
      message: 'Postbacks are on for offnet, but still off globally: set CASHTRACK_POSTBACKS_ENABLED=true (postbacks.enabled) and restart the daemon.',
    });
  });
});

describeEachDialect(
  'rotating a postback secret over REST',
  (use) => {
    const client = adminClient(use);
    const sale = (token: string, txn: string) => query({ token, txn, status: 'pending', amount: '10.00', payout: '1.00', test: '1' });

    it('makes a new secret, shown once, and the old one stops at once', async () => {
      expect((await client.post('/networks/rotnet', shopnetDefinition())).statusCode).toBe(201);
      const on = await client.post('/networks/rotnet/postback', { enabled: true });
      const old = (on.result as Json).secret as string;
      const rotated = await client.post('/networks/rotnet/postback/secret', {});
      expect(rotated.statusCode, JSON.stringify(rotated.result)).toBe(200);
      const body = rotated.result as Json;
      expect(body).toMatchObject({
        mode: 'token',
        secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        network: { id: 'rotnet', postbacks: { enabled: true, secret_set: true, previous_secret_until: null } },
      });
      expect(body.secret).not.toBe(old);
      // Never shown again.
      expect((await client.get('/networks/rotnet')).payload).not.toContain(body.secret);
      expect((await getPostback(client.server, 'rotnet', sale(old, 'R-1'))).status).toBe(401);
      expect((await getPostback(client.server, 'rotnet', sale(body.secret, 'R-2'))).status).toBe(200);
    });

    it('keeps the old secret for the grace hours asked for, and changes the mode with a new secret', async () => {
      expect((await client.post('/networks/gracenet', shopnetDefinition())).statusCode).toBe(201);
      const old = ((await client.post('/networks/gracenet/postback', { enabled: true })).result as Json).secret as string;
      const rotated = await client.post('/networks/gracenet/postback/secret', { grace_hours: 2 });
      expect(rotated.statusCode).toBe(200);
      expect((rotated.result as Json).network.postbacks.previous_secret_until).toEqual(expect.any(String));
      expect((await getPostback(client.server, 'gracenet', sale(old, 'G-1'))).status).toBe(200);
      const hmac = await client.post('/networks/gracenet/postback/secret', { mode: 'hmac' });
      expect(hmac.result).toMatchObject({ mode: 'hmac', network: { postbacks: { mode: 'hmac' } } });
    });

    it('refuses an unknown mode, a grace period over a week and an unknown network, changing nothing', async () => {
      expect((await client.post('/networks/badnet', shopnetDefinition())).statusCode).toBe(201);
      const mode = await client.post('/networks/badnet/postback/secret', { mode: 'plain' });
      expect(mode.statusCode).toBe(400);
      expect(mode.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { mode: expect.any(String) } } });
      const grace = await client.post('/networks/badnet/postback/secret', { grace_hours: 169 });
      expect(grace.statusCode).toBe(400);
      expect(grace.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { grace_hours: expect.any(String) } } });
      expect(((await client.get('/networks/badnet')).result as Json).postbacks.secret_set).toBe(false);
      const missing = await client.post('/networks/nosuchnet/postback/secret', {});
      expect(missing.statusCode).toBe(404);
      expect(missing.result).toMatchObject({ code: 'svc_network_not_found' });
    });
  },
  { 'postbacks.enabled': true },
);
