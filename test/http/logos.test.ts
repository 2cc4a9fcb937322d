import sharp from 'sharp';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';
import { image } from '../helpers/images.js';
import { addAdvertiser, site, type Site } from '../helpers/web.js';

type Json = Record<string, any>;

describeEachDialect('logos and media over REST', (use) => {
  const client = adminClient(use);
  let web: Site;
  beforeAll(async () => {
    web = await site({
      '/logo.png': { body: await image('png', 100, 50), type: 'image/png' },
      '/logo.jpg': { body: await image('jpeg', 30, 30), type: 'image/jpeg' },
      '/page': { body: '<html></html>', type: 'text/html' },
    });
    await addAdvertiser(use().ctx, 'restnet', 'one', { logo_url: `${web.origin}/logo.png` });
    await addAdvertiser(use().ctx, 'restnet', 'two', { logo_url: `${web.origin}/logo.jpg` });
    await addAdvertiser(use().ctx, 'restnet', 'html', { logo_url: `${web.origin}/page` });
  });
  afterAll(async () => {
    await web.close();
  });
  const send = (method: string, url: string, payload?: Json) =>
    client.server.inject({ method, url: `${NS}${url}`, payload, headers: { authorization: client.admin.authorization } });

  it('fetches a logo: 201 the first time, 200 with the logo on file, 201 again with ?force or force in the body', async () => {
    const first = await client.post('/advertisers/restnet/one/logo', {});
    expect(first.statusCode).toBe(201);
    const body = first.result as Json;
    expect(body).toMatchObject({
      module: 'restnet',
      advertiser: 'one',
      fetched: true,
      source: 'network',
      media: { type: 'image/png', ext: 'png', width: 100, height: 50 },
    });
    expect(body.logo).toBe(`/media/${body.media.sha256}.png`);
    const kept = await client.post('/advertisers/restnet/one/logo', {});
    expect(kept.statusCode).toBe(200);
    expect(kept.result).toMatchObject({ fetched: false, logo: body.logo });
    expect((await client.post('/advertisers/restnet/one/logo?force', {})).statusCode).toBe(201);
    expect((await client.post('/advertisers/restnet/one/logo?force=1', {})).statusCode).toBe(201);
    expect((await client.post('/advertisers/restnet/one/logo?force=0', {})).statusCode).toBe(200);
    expect((await client.post('/advertisers/restnet/one/logo', { force: true })).statusCode).toBe(201);
    expect((await client.post('/advertisers/restnet/one/logo?force=maybe', {})).statusCode).toBe(400);
    expect((await client.post('/advertisers/restnet/one/logo', { url: 'http://elsewhere.example/x.png' })).statusCode).toBe(400);
    const bare = await client.server.inject({
      method: 'POST',
      url: `${NS}/advertisers/restnet/one/logo`,
      headers: { authorization: client.admin.authorization },
    });
    expect(bare.statusCode).toBe(200);
    const shown = await client.get('/advertisers/restnet/one');
    expect(shown.result).toMatchObject({ logo: body.logo, local_logo: `${body.media.sha256}.png` });
  });

  it('answers 422 svc_logo_not_found naming what was tried, and 404 for an unknown advertiser', async () => {
    const res = await client.post('/advertisers/restnet/html/logo', {});
    expect(res.statusCode).toBe(422);
    expect(res.result).toMatchObject({
      code: 'svc_logo_not_found',
      data: { status: 422, tried: [{ source: 'network', url: `${web.origin}/page`, reason: 'not_an_image' }] },
    });
    expect(JSON.stringify(res.result)).not.toContain('<html>');
    const missing = await client.post('/advertisers/restnet/nobody/logo', {});
    expect(missing.statusCode).toBe(404);
    expect(missing.result).toMatchObject({ code: 'svc_advertiser_not_found' });
  });

  it('serves a media file publicly with its exact type, immutable caching, nosniff, a locked-down policy and an ETag', async () => {
    const { media } = (await client.post('/advertisers/restnet/two/logo', {})).result as Json;
    const res = await client.server.inject({ url: `/media/${media.sha256}.jpg` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers.etag).toBe(`"${media.sha256}"`);
    expect(res.rawPayload.length).toBe(media.bytes);
    expect((await sharp(res.rawPayload).metadata()).format).toBe('jpeg');
    const again = await client.server.inject({ url: `/media/${media.sha256}.jpg`, headers: { 'if-none-match': `"${media.sha256}"` } });
    expect(again.statusCode).toBe(304);
    const head = await client.server.inject({ method: 'HEAD', url: `/media/${media.sha256}.jpg` });
    expect(head.statusCode).toBe(200);
  });

  it('answers 404 svc_media_not_found for a wrong extension, an unknown hash or a name that is no media file', async () => {
    const { media } = (await client.post('/advertisers/restnet/two/logo', {})).result as Json;
    for (const url of [
      `/media/${media.sha256}.png`,
      `/media/${'0'.repeat(64)}.png`,
      `/media/${media.sha256.toUpperCase()}.jpg`,
      '/media/logo.svg',
      `/media/${media.sha256}.svg`,
    ]) {
      const res = await client.server.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.result, url).toMatchObject({ code: 'svc_media_not_found' });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await client.server.inject({ url: '/media/' })).statusCode).toBe(404);
  });

  it('starts, shows and cancels the bulk run: 202, the state, 409 while one runs and 409 when none does', async () => {
    const started = await send('POST', '/advertisers/logos', { status: 'active' });
    expect(started.statusCode).toBe(202);
    expect(started.result).toMatchObject({ type: 'logos.bulk', status: 'queued', params: { status: 'active', force: false } });
    const busy = await send('POST', '/advertisers/logos', { force: true });
    expect(busy.statusCode).toBe(409);
    expect(busy.result).toMatchObject({ code: 'svc_job_already_running' });
    const state = await client.get('/advertisers/logos');
    expect(state.statusCode).toBe(200);
    expect(state.result).toMatchObject({ job: { id: (started.result as Json).id, status: 'queued' }, advertisers: { total: 3 } });
    const cancelled = await send('DELETE', '/advertisers/logos');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.result).toMatchObject({ status: 'cancelled' });
    const none = await send('DELETE', '/advertisers/logos');
    expect(none.statusCode).toBe(409);
    expect(none.result).toMatchObject({ code: 'svc_job_not_running', data: { status: 409, type: 'logos.bulk' } });
  });

  it('answers 409 svc_job_not_running, as documented, when the run finishes just before its cancel lands', async () => {
    const { ctx } = use();
    const started = (await send('POST', '/advertisers/logos', {})).result as Json;
    // The runner finishes the run after the route has looked for it and before the cancel writes.
    const cancel = ctx.jobs.cancel.bind(ctx.jobs);
    const spy = vi.spyOn(ctx.jobs, 'cancel').mockImplementation(async (id, actor) => {
      await ctx.db.execute("UPDATE jobs SET status = 'done', unique_key = NULL, finished_at = ? WHERE id = ?", [new Date(), id]);
      return cancel(id, actor);
    });
    try {
      const late = await send('DELETE', '/advertisers/logos');
      expect(late.statusCode).toBe(409);
      expect(late.result).toMatchObject({ code: 'svc_job_not_running', data: { status: 409, type: 'logos.bulk', job: { id: started.id, status: 'done' } } });
    } finally {
      spy.mockRestore();
    }
  });

  it('validates the bulk filters', async () => {
    expect((await send('POST', '/advertisers/logos', { status: 'sleeping' })).statusCode).toBe(400);
    expect((await send('POST', '/advertisers/logos', { network: 'Bad Net!' })).statusCode).toBe(400);
    const unknown = await send('POST', '/advertisers/logos', { network: 'nonet' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.result).toMatchObject({ code: 'svc_network_not_found' });
  });
});

describeEachDialect(
  'media URLs on the public base',
  (use) => {
    const client = adminClient(use);
    it('shows the logo as an absolute URL on server.public_url', async () => {
      const web = await site({ '/logo.gif': { body: await image('gif', 12, 12), type: 'image/gif' } });
      try {
        await addAdvertiser(use().ctx, 'pubnet', 'one', { logo_url: `${web.origin}/logo.gif` });
        const res = await client.post('/advertisers/pubnet/one/logo', {});
        const body = res.result as Json;
        expect(body.logo).toBe(`https://admin.example.com/media/${body.media.sha256}.png`);
        expect(((await client.get('/advertisers?network=pubnet')).result as Json[])[0].logo).toBe(body.logo);
      } finally {
        await web.close();
      }
    });
  },
  { 'server.public_url': 'https://admin.example.com' },
);
