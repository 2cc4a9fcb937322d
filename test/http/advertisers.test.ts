import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import type { User } from '../../src/services/users/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect('advertisers over REST', (use) => {
  let server: Server;
  let admin: Actor;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
    const now = new Date();
    for (const [id, name] of [
      ['1', 'Alpha Shoes'],
      ['2', 'Alpine Gear'],
      ['3', 'Beta Books'],
    ]) {
      await use().ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, status, last_seen_sync, created_at, updated_at) VALUES ('awin', ?, ?, 'active', 1, ?, ?)",
        [id, name, now, now],
      );
    }
  });
  afterAll(async () => {
    await server.stop();
  });
  const request = (method: string, url: string, payload?: Json) =>
    server.inject({ method, url: `${NS}${url}`, payload, headers: { authorization: admin.authorization } });

  it('lists advertisers by name prefix with paging headers', async () => {
    const res = await request('GET', '/advertisers?search=alp&orderby=name');
    expect(res.statusCode).toBe(200);
    expect((res.result as Json[]).map((a) => a.name)).toEqual(['Alpha Shoes', 'Alpine Gear']);
    expect(res.headers['x-wp-total']).toBe('2');
    expect((await request('GET', '/advertisers?orderby=price')).statusCode).toBe(400);
  });

  it('shows one advertiser and answers 404 svc_advertiser_not_found for an unknown one', async () => {
    const res = await request('GET', '/advertisers/awin/3');
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ module: 'awin', advertiser: '3', name: 'Beta Books', cashback_rule: { source: 'default' } });
    const missing = await request('GET', '/advertisers/awin/999');
    expect(missing.statusCode).toBe(404);
    expect(missing.result).toMatchObject({ code: 'svc_advertiser_not_found' });
  });

  it('looks advertisers up by prefix as module/advertiser ids', async () => {
    const res = await request('GET', '/lookup/advertisers?search=Be');
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual([{ id: 'awin/3', label: 'Beta Books (awin)' }]);
  });

  it('pages advertiser lookups at most 20 a page, with X-WP-Total', async () => {
    const first = await request('GET', '/lookup/advertisers?search=Al&per_page=1');
    expect(first.result).toEqual([{ id: 'awin/1', label: 'Alpha Shoes (awin)' }]);
    expect(first.headers['x-wp-total']).toBe('2');
    expect(first.headers['x-wp-totalpages']).toBe('2');
    expect((await request('GET', '/lookup/advertisers?search=Al&per_page=1&page=2')).result).toEqual([{ id: 'awin/2', label: 'Alpine Gear (awin)' }]);
    expect((await request('GET', '/lookup/advertisers?search=Al&per_page=21')).result).toMatchObject({
      code: 'rest_invalid_param',
      data: { details: { per_page: { code: 'rest_out_of_bounds' } } },
    });
  });

  it("sets an advertiser's cashback override, shows it as the effective rule, and removes it again", async () => {
    const set = await request('POST', '/advertisers/awin/2/cashback', { type: 'percent_commission', value: '75' });
    expect(set.statusCode, JSON.stringify(set.result)).toBe(200);
    expect(set.result).toMatchObject({ advertiser: '2', cashback_rule: { type: 'percent_commission', value: '75', source: 'advertiser' } });
    expect((await request('GET', '/advertisers/awin/2')).result).toMatchObject({ cashback_rule: { value: '75', source: 'advertiser' } });
    const removed = await request('DELETE', '/advertisers/awin/2/cashback');
    expect(removed.statusCode).toBe(200);
    expect(removed.result).toMatchObject({ cashback_rule: { source: 'default' } });
    // Removing what is not there is harmless.
    expect((await request('DELETE', '/advertisers/awin/2/cashback')).statusCode).toBe(200);
  });

  it('refuses a cashback override of an unknown type or value (400) and for an unknown advertiser (404), changing nothing', async () => {
    const badType = await request('POST', '/advertisers/awin/3/cashback', { type: 'bonus', value: '5' });
    expect(badType.statusCode).toBe(400);
    expect(badType.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { type: expect.any(String) } } });
    const badValue = await request('POST', '/advertisers/awin/3/cashback', { type: 'percent_sale', value: 'lots' });
    expect(badValue.statusCode).toBe(400);
    expect(badValue.result).toMatchObject({ code: 'svc_invalid_rate', data: { field: expect.any(String) } });
    const missing = await request('POST', '/advertisers/awin/999/cashback', { type: 'percent_sale', value: '5' });
    expect(missing.statusCode).toBe(404);
    expect(missing.result).toMatchObject({ code: 'svc_advertiser_not_found' });
    expect((await request('DELETE', '/advertisers/awin/999/cashback')).statusCode).toBe(404);
    expect((await request('GET', '/advertisers/awin/3')).result).toMatchObject({ cashback_rule: { source: 'default' } });
  });

  it('starts a sync job (202), refuses a second one while it is queued (409), and 404s an unknown network', async () => {
    const res = await request('POST', '/advertisers/sync', { network: 'awin' });
    expect(res.statusCode).toBe(202);
    expect(res.result).toMatchObject({ type: 'advertisers.sync', params: { network: 'awin' }, status: 'queued' });
    const again = await request('POST', '/advertisers/sync', { network: 'awin' });
    expect(again.statusCode).toBe(409);
    expect(again.result).toMatchObject({ code: 'svc_job_already_running' });
    expect((await request('POST', '/advertisers/sync', { network: 'nosuch' })).statusCode).toBe(404);
  });
});

describeEachDialect('tracking links over REST', (use) => {
  const api = adminClient(use);
  const admitadTemplate = 'https://ad.admitad.com/g/1e8d1144942e2a0e4f5f16525dc3e8/';
  const impactTemplate = 'https://example-gear.sjv.io/c/1234567/88200/15745';
  let ann: User;
  let gone: User;

  const addAdvertiser = (
    module: string,
    id: string,
    fields: { domain?: string | null; site_url?: string | null; tracking_template?: string | null; status?: string } = {},
  ) => {
    const now = new Date();
    return use().ctx.db.execute(
      'INSERT INTO advertisers (module, advertiser, name, domain, site_url, tracking_template, status, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
      [
        module,
        id,
        `Shop ${module} ${id}`,
        fields.domain ?? null,
        fields.site_url ?? null,
        fields.tracking_template ?? null,
        fields.status ?? 'active',
        now,
        now,
      ],
    );
  };
  const link = (module: string, advertiser: string, query: Record<string, string>) =>
    api.get(`/advertisers/${encodeURIComponent(module)}/${encodeURIComponent(advertiser)}/link?${new URLSearchParams(query)}`);
  const refusal = (res: { statusCode: number; result: unknown }): Json => ({ status: res.statusCode, ...(res.result as Json) });

  beforeAll(async () => {
    const { ctx } = use();
    ann = await ctx.users.create({ login: 'ann', email: 'ann@example.com', role: 'member' });
    gone = await ctx.users.create({ login: 'gone', email: 'gone@example.com', role: 'member' });
    await ctx.users.setStatus(gone.id, 'disabled');

    await ctx.networks.configure('awin', { publisher_id: '45628', api_token: 'awin-token' }, 'test');
    await ctx.networks.enable('awin', 'test');
    await ctx.networks.configure('admitad', { client_id: 'c', client_secret: 's', website_id: '77' }, 'test');
    await ctx.networks.enable('admitad', 'test');
    await ctx.networks.configure('impact', { account_sid: 'IR1', auth_token: 't' }, 'test');
    await ctx.networks.enable('impact', 'test');
    await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
    await ctx.networks.saveCustom('homeonly', shopnetDefinition({ tracking_link: 'https://go.home.test/{advertiser_id}?sub={sub_id}' }), 'test');
    await ctx.networks.saveCustom('nolinks', shopnetDefinition({ tracking_link: null }), 'test');
    await ctx.networks.saveCustom(
      'needsaff',
      shopnetDefinition({ settings: [{ name: 'aff', required: true }], tracking_link: 'https://go.aff.test/{settings.aff}?s={sub_id}&u={url}' }),
      'test',
    );
    await ctx.networks.saveCustom('offnet', shopnetDefinition(), 'test');
    await ctx.networks.disable('offnet', 'test');

    await addAdvertiser('awin', '1001', { domain: 'example-shoes.test' });
    await addAdvertiser('awin', '1002', { domain: 'example-gone.test', status: 'inactive' });
    await addAdvertiser('awin', '1003');
    await addAdvertiser('awin', '1004', { site_url: 'https://www.example-site.test/home' });
    await addAdvertiser('admitad', '6115', { domain: 'example-store.test', tracking_template: admitadTemplate });
    await addAdvertiser('admitad', '6116', { domain: 'example-store.test' });
    await addAdvertiser('impact', '15745', { domain: 'example-gear.test', tracking_template: impactTemplate });
    await addAdvertiser('shopnet', '501', { domain: 'example-tea.test' });
    await addAdvertiser('homeonly', '9', { domain: 'example-home.test' });
    await addAdvertiser('nolinks', '1', { domain: 'example-none.test' });
    await addAdvertiser('needsaff', '1', { domain: 'example-aff.test' });
    await addAdvertiser('offnet', '1', { domain: 'example-off.test' });
  });

  it('builds an Awin deep link with the member id as clickref and the target as ued', async () => {
    const target = 'https://www.example-shoes.test/trainers?size=9&colour=red';
    const res = await link('awin', '1001', { member: String(ann.id), url: target });
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual({
      url: `https://www.awin1.com/cread.php?awinmid=1001&awinaffid=45628&clickref=${ann.id}&ued=${encodeURIComponent(target)}`,
      module: 'awin',
      advertiser: '1001',
      member: { id: ann.id, login: 'ann' },
      sub_id: String(ann.id),
      deeplink: true,
      target,
      go_token: expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/),
      go_url: null,
      go_expires_at: expect.any(String),
    });
  });

  it('builds a plain Awin link without a target, finding the member by login or by email', async () => {
    const plain = `https://www.awin1.com/awclick.php?mid=1001&id=45628&clickref=${ann.id}`;
    for (const member of ['ann', 'ann@example.com']) {
      const res = await link('awin', '1001', { member });
      expect(res.statusCode, member).toBe(200);
      expect(res.result).toMatchObject({ url: plain, sub_id: String(ann.id), member: { id: ann.id, login: 'ann' }, deeplink: false });
    }
  });

  it("adds subid and ulp to an Admitad programme's gotolink", async () => {
    const target = 'https://example-store.test/shoes?a=1';
    const res = await link('admitad', '6115', { member: 'ann', url: target });
    expect(res.statusCode).toBe(200);
    expect((res.result as Json).url).toBe(`${admitadTemplate}?subid=${ann.id}&ulp=${encodeURIComponent(target)}`);
    expect((await link('admitad', '6115', { member: 'ann' })).result).toMatchObject({ url: `${admitadTemplate}?subid=${ann.id}`, deeplink: false });
  });

  it("adds subId1 and u to an impact.com campaign's tracking link", async () => {
    const target = 'https://www.example-gear.test/tents';
    const res = await link('impact', '15745', { member: 'ann', url: target });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ url: `${impactTemplate}?subId1=${ann.id}&u=${encodeURIComponent(target)}`, sub_id: String(ann.id), deeplink: true });
  });

  it("fills a custom network's template with URL-encoded placeholders", async () => {
    const target = 'https://shop.example-tea.test/p?a=1&b=two words';
    const res = await link('shopnet', '501', { member: 'ann', url: target });
    expect(res.statusCode).toBe(200);
    expect((res.result as Json).url).toBe(`https://go.shopnet.test/c/501?aff=77&subid=${ann.id}&url=${encodeURIComponent(new URL(target).toString())}`);
    expect((await link('shopnet', '501', { member: 'ann' })).result).toMatchObject({
      url: `https://go.shopnet.test/c/501?aff=77&subid=${ann.id}`,
      deeplink: false,
    });
  });

  it('credits the member when the conversion comes back with the sub id of the link', async () => {
    const res = await link('shopnet', '501', { member: 'ann' });
    const change = await use().ctx.orders.record(
      {
        network: 'shopnet',
        transaction_id: 'LINK-1',
        advertiser: '501',
        sub_id: (res.result as Json).sub_id,
        sale_amount: '20.00',
        commission: '2.00',
        currency: 'EUR',
        source: 'postback',
      },
      'test',
    );
    expect(change.member).toMatchObject({ id: ann.id, login: 'ann' });
  });

  it("accepts targets on the advertiser's domain and its subdomains, and any host when no domain is known", async () => {
    for (const url of ['https://example-shoes.test/', 'http://EXAMPLE-SHOES.test/x', 'https://m.www.example-shoes.test./a#top']) {
      expect((await link('awin', '1001', { member: 'ann', url })).statusCode, url).toBe(200);
    }
    expect((await link('awin', '1003', { member: 'ann', url: 'https://anywhere.test/' })).statusCode).toBe(200);
    // No domain, but a site URL: its host (without www.) is the domain.
    expect((await link('awin', '1004', { member: 'ann', url: 'https://example-site.test/sale' })).statusCode).toBe(200);
    expect(refusal(await link('awin', '1004', { member: 'ann', url: 'https://other.test/sale' }))).toMatchObject({ status: 400, code: 'svc_invalid_url' });
  });

  it.each([
    ['another site', 'https://evil.test/?u=example-shoes.test', /on example-shoes\.test/],
    ['a look-alike domain', 'https://evil-example-shoes.test/', /on example-shoes\.test/],
    ['the domain as a subdomain of another', 'https://example-shoes.test.evil.test/', /on example-shoes\.test/],
    ['a javascript: URL', 'javascript:alert(1)', /http or https/],
    ['an ftp URL', 'ftp://example-shoes.test/file', /http or https/],
    ['a relative URL', '/trainers', /valid absolute URL/],
    ['credentials in the URL', 'https://example-shoes.test@evil.test/', /user name or password/],
  ])('refuses %s as a target (400 svc_invalid_url naming url)', async (_name, url, message) => {
    const res = await link('awin', '1001', { member: 'ann', url });
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ code: 'svc_invalid_url', data: { status: 400 } });
    expect((res.result as Json).data.params.url).toMatch(message);
  });

  it('refuses a target over 2000 characters, a missing member and unknown parameters (400)', async () => {
    const long = await link('awin', '1001', { member: 'ann', url: `https://example-shoes.test/${'a'.repeat(2000)}` });
    expect(refusal(long)).toMatchObject({ status: 400, code: 'rest_invalid_param', data: { params: { url: expect.any(String) } } });
    expect(refusal(await link('awin', '1001', {}))).toMatchObject({ status: 400, code: 'rest_missing_callback_param', data: { params: ['member'] } });
    expect(refusal(await link('awin', '1001', { member: 'ann', sub_id: 'x' }))).toMatchObject({ status: 400, code: 'rest_invalid_param' });
  });

  it('answers 404 for an unknown advertiser or member, checking the target URL first', async () => {
    expect(refusal(await link('awin', '9999', { member: 'ann' }))).toMatchObject({
      status: 404,
      code: 'svc_advertiser_not_found',
      data: { module: 'awin', advertiser: '9999' },
    });
    expect(refusal(await link('nosuch', '1', { member: 'ann' }))).toMatchObject({ status: 404, code: 'svc_advertiser_not_found' });
    expect(refusal(await link('awin', '1001', { member: '999999' }))).toMatchObject({ status: 404, code: 'svc_member_not_found', data: { member_id: 999999 } });
    expect(refusal(await link('awin', '1001', { member: 'nobody' }))).toMatchObject({ status: 404, code: 'svc_member_not_found', data: { member: 'nobody' } });
    expect(refusal(await link('awin', '9999', { member: 'ann', url: 'javascript:alert(1)' }))).toMatchObject({ status: 400, code: 'svc_invalid_url' });
  });

  it('refuses a disabled or unconfigured network, an inactive advertiser and a disabled member (409)', async () => {
    expect(refusal(await link('offnet', '1', { member: 'ann' }))).toMatchObject({ status: 409, code: 'svc_network_disabled', data: { network: 'offnet' } });
    const unconfigured = refusal(await link('needsaff', '1', { member: 'ann' }));
    expect(unconfigured).toMatchObject({ status: 409, code: 'svc_network_not_configured', data: { network: 'needsaff', missing: ['aff'] } });
    expect(unconfigured.message).toContain('aff');
    expect(refusal(await link('awin', '1002', { member: 'ann' }))).toMatchObject({
      status: 409,
      code: 'svc_advertiser_inactive',
      data: { module: 'awin', advertiser: '1002' },
    });
    expect(refusal(await link('awin', '1001', { member: 'gone' }))).toMatchObject({ status: 409, code: 'svc_member_disabled', data: { member_id: gone.id } });
  });

  it('refuses a link the network cannot build: no stored template, no template, or no {url} for a deep link (409)', async () => {
    expect(refusal(await link('admitad', '6116', { member: 'ann' }))).toMatchObject({ status: 409, code: 'svc_tracking_link_unavailable' });
    expect(refusal(await link('nolinks', '1', { member: 'ann' }))).toMatchObject({ status: 409, code: 'svc_tracking_link_unavailable' });
    expect(refusal(await link('homeonly', '9', { member: 'ann', url: 'https://example-home.test/sale' }))).toMatchObject({
      status: 409,
      code: 'svc_deeplink_unsupported',
    });
    expect((await link('homeonly', '9', { member: 'ann' })).result).toMatchObject({ url: `https://go.home.test/9?sub=${ann.id}`, deeplink: false });
  });

  it('is refused to anonymous callers and documented in OPTIONS', async () => {
    const anonymous = await api.server.inject({ url: `${NS}/advertisers/awin/1001/link?member=ann` });
    expect(anonymous.statusCode).toBe(401);
    const options = await api.server.inject({
      method: 'OPTIONS',
      url: `${NS}/advertisers/awin/1001/link`,
      headers: { authorization: api.admin.authorization },
    });
    expect(options.statusCode).toBe(200);
    expect(JSON.stringify(options.result)).toContain('member');
  });
});
