import { expect, it, vi } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';
import { addShop, addShops } from '../helpers/pages.js';
import { OUTBOUND_REL } from '../../src/services/pages/sanitize.js';

type Json = Record<string, any>;

describeEachDialect('shop pages over REST', (use) => {
  const api = adminClient(use);
  const del = (url: string, payload?: Json) =>
    api.server.inject({ method: 'DELETE', url: `${NS}${url}`, payload, headers: { authorization: api.admin.authorization } });

  it('makes a page (201 with Location), then answers 409 svc_page_exists naming it', async () => {
    await addShop(use().ctx, 'awin', '1', { name: 'Rest Shop' });
    const res = await api.post('/advertisers/awin/1/page', { status: 'publish' });
    expect(res.statusCode).toBe(201);
    const page = res.result as Json;
    expect(page).toMatchObject({
      module: 'awin',
      advertiser: '1',
      title: 'Rest Shop Cashback',
      slug: 'rest-shop',
      status: 'publish',
      author: `user:${api.admin.id}`,
    });
    expect(res.headers.location).toContain(`/pages/${page.id}`);
    const again = await api.post('/advertisers/awin/1/page', {});
    expect(again.statusCode).toBe(409);
    expect(again.result).toMatchObject({ code: 'svc_page_exists', data: { status: 409, page: { id: page.id, slug: 'rest-shop' } } });
  });

  it('answers 404 for an unknown advertiser, 409 for an inactive one and 400 for a bad status or template', async () => {
    await addShop(use().ctx, 'awin', '2', { status: 'inactive' });
    expect((await api.post('/advertisers/awin/nope/page', {})).result).toMatchObject({ code: 'svc_advertiser_not_found', data: { status: 404 } });
    expect((await api.post('/advertisers/awin/2/page', {})).result).toMatchObject({ code: 'svc_advertiser_inactive', data: { status: 409 } });
    expect((await api.post('/advertisers/awin/2/page', { status: 'pending' })).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await api.post('/advertisers/awin/2/page', { template: 'x'.repeat(65) })).result).toMatchObject({ code: 'rest_invalid_param' });
  });

  it('reads, updates (re-sanitised) and deletes a page', async () => {
    await addShop(use().ctx, 'awin', '3', { name: 'Edit Me' });
    const page = (await api.post('/advertisers/awin/3/page', {})).result as Json;
    expect((await api.get(`/pages/${page.id}`)).result).toEqual(page);
    const res = await api.post(`/pages/${page.id}`, {
      body: '<h2 onclick="x()">Deals</h2><a href="javascript:alert(1)">bad</a><a href="https://edit.example/">good</a><script>alert(1)</script>',
      status: 'publish',
    });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({
      id: page.id,
      status: 'publish',
      body: `<h2>Deals</h2><a>bad</a><a href="https://edit.example/" rel="${OUTBOUND_REL}">good</a>`,
    });
    const gone = await del(`/pages/${page.id}`);
    expect(gone.statusCode).toBe(200);
    expect(gone.result).toMatchObject({ deleted: true, previous: { id: page.id, status: 'publish' } });
    expect((await api.get(`/pages/${page.id}`)).result).toMatchObject({ code: 'svc_page_not_found', data: { status: 404 } });
    expect((await del(`/pages/${page.id}`)).statusCode).toBe(404);
  });

  it('refuses a 10,000-character title, an empty one and unknown fields with 400 rest_invalid_param, changing nothing', async () => {
    await addShop(use().ctx, 'awin', '4', { name: 'Long Title' });
    const page = (await api.post('/advertisers/awin/4/page', {})).result as Json;
    const long = await api.post(`/pages/${page.id}`, { title: 'x'.repeat(10_000) });
    expect(long.statusCode).toBe(400);
    expect(long.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { title: { code: 'rest_too_long' } } } });
    expect((await api.post(`/pages/${page.id}`, { title: '   ' })).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await api.post(`/pages/${page.id}`, { author: 'me' })).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await api.post(`/pages/${page.id}`, { title: '<i></i>' })).result).toMatchObject({
      code: 'svc_invalid_page',
      data: { status: 400, field: 'title' },
    });
    expect((await api.get(`/pages/${page.id}`)).result).toMatchObject({ title: 'Long Title Cashback' });
  });

  it('lists pages with WordPress paging headers and filters, and looks them up by prefix', async () => {
    for (const [id, name] of [
      ['10', 'Paged One'],
      ['11', 'Paged Two'],
      ['12', 'Paged Three'],
    ]) {
      await addShop(use().ctx, 'paged', id, { name });
      await api.post(`/advertisers/paged/${id}/page`, {});
    }
    const res = await api.get('/pages?network=paged&per_page=2');
    expect(res.statusCode).toBe(200);
    expect((res.result as Json[]).map((p) => p.title)).toEqual(['Paged Three Cashback', 'Paged Two Cashback']);
    expect(res.headers['x-wp-total']).toBe('3');
    expect(res.headers['x-wp-totalpages']).toBe('2');
    expect(String(res.headers.link)).toContain('rel="next"');
    expect((await api.get('/pages?network=paged&search=paged-o')).result).toMatchObject([{ slug: 'paged-one' }]);
    expect((await api.get('/pages?status=trash')).result).toMatchObject({ code: 'rest_invalid_param' });
    const lookup = await api.get('/lookup/pages?search=Paged%20T');
    expect(lookup.result).toEqual([
      { id: expect.any(Number), label: 'Paged Three Cashback (paged-three)' },
      { id: expect.any(Number), label: 'Paged Two Cashback (paged-two)' },
    ]);
    expect((await api.get('/lookup/pages?search=paged&per_page=21')).result).toMatchObject({ code: 'rest_invalid_param' });
  });

  it('starts the bulk job (202), refuses a second with other filters (409), shows its state and cancels it', async () => {
    const { ctx } = use();
    await addShops(ctx, 'bulknet', 5);
    const before = (await api.get('/advertisers/pages')).result as Json;
    expect(before.advertisers.without_page).toBeGreaterThanOrEqual(5);
    expect((await del('/advertisers/pages')).result).toMatchObject({ code: 'svc_job_not_running', data: { status: 409, type: 'pages.bulk' } });
    const started = await api.post('/advertisers/pages', { network: 'bulknet', status: 'publish' });
    expect(started.statusCode).toBe(202);
    expect(started.result).toMatchObject({ type: 'pages.bulk', status: 'queued', params: { network: 'bulknet', status: 'publish' } });
    const second = await api.post('/advertisers/pages', {});
    expect(second.statusCode).toBe(409);
    expect(second.result).toMatchObject({ code: 'svc_job_already_running', data: { job: { id: (started.result as Json).id } } });
    expect(((await api.get('/advertisers/pages')).result as Json).job).toMatchObject({ id: (started.result as Json).id, status: 'queued' });
    const cancelled = await del('/advertisers/pages');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.result).toMatchObject({ id: (started.result as Json).id, status: 'cancelled' });
    // Nothing left to cancel: the answer names the latest run.
    expect((await del('/advertisers/pages')).result).toMatchObject({
      code: 'svc_job_not_running',
      data: { type: 'pages.bulk', job: { id: (started.result as Json).id, status: 'cancelled' } },
    });
    expect((await api.post('/advertisers/pages', { template: 'nope' })).result).toMatchObject({ code: 'svc_invalid_page', data: { field: 'template' } });
    expect((await api.post('/advertisers/pages', { network: 'Bad Id' })).result).toMatchObject({ code: 'rest_invalid_param' });
  });

  it('answers 409 svc_job_not_running when the bulk run finishes just before its cancel lands', async () => {
    const { ctx } = use();
    const started = (await api.post('/advertisers/pages', { network: 'racenet' })).result as Json;
    // The runner finishes the run after the route has looked for it and before the cancel writes.
    const cancel = ctx.jobs.cancel.bind(ctx.jobs);
    const spy = vi.spyOn(ctx.jobs, 'cancel').mockImplementation(async (id, actor) => {
      await ctx.db.execute("UPDATE jobs SET status = 'done', unique_key = NULL, finished_at = ? WHERE id = ?", [new Date(), id]);
      return cancel(id, actor);
    });
    try {
      const late = await del('/advertisers/pages');
      expect(late.statusCode).toBe(409);
      expect(late.result).toMatchObject({ code: 'svc_job_not_running', data: { type: 'pages.bulk', job: { id: started.id, status: 'done' } } });
    } finally {
      spy.mockRestore();
    }
  });
});
