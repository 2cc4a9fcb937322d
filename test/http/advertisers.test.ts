import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

type Json = Record<string, any>;

describeEachDialect('advertisers over REST', (use) => {
  let server: Server;
  let admin: Actor;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
    const now = new Date();
    for (const [id, name] of [['1', 'Alpha Shoes'], ['2', 'Alpine Gear'], ['3', 'Beta Books']]) {
      await use().ctx.db.execute("INSERT INTO advertisers (module, advertiser, name, status, last_seen_sync, created_at, updated_at) VALUES ('awin', ?, ?, 'active', 1, ?, ?)", [id, name, now, now]);
    }
  });
  afterAll(async () => {
    await server.stop();
  });
  const request = (method: string, url: string, payload?: Json) => server.inject({ method, url: `${NS}${url}`, payload, headers: { authorization: admin.authorization } });

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
