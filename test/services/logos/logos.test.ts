import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ServiceError } from '../../../src/errors.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { bmpEntry, ico, image, pngBomb, SVG_WITH_SCRIPT } from '../../helpers/images.js';
import { addAdvertiser, site, type Site } from '../../helpers/web.js';

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

describeEachDialect(
  'shop logos',
  (use) => {
    let web: Site;
    let png: Buffer;
    beforeAll(async () => {
      png = await image('png', 120, 80);
      web = await site({
        '/logo.png': { body: png, type: 'image/png' },
        '/logo.jpg': { body: await image('jpeg'), type: 'image/jpeg' },
        '/logo.gif': { body: await image('gif'), type: 'image/gif' },
        '/logo.webp': { body: await image('webp'), type: 'image/webp' },
        '/same.png': { body: png, type: 'image/png' },
        '/page.html': { body: '<!doctype html><html><body>Not a logo</body></html>', type: 'image/png' },
        '/logo.svg': { body: SVG_WITH_SCRIPT, type: 'image/svg+xml' },
        '/truncated.png': { body: png.subarray(0, Math.floor(png.length / 2)), type: 'image/png' },
        '/bomb.png': { body: pngBomb(), type: 'image/png' },
        '/huge.png': { stream: 200 * 1024 * 1024 },
        '/loop-a': { redirect: '/loop-b' },
        '/loop-b': { redirect: '/loop-a' },
      });
    });
    afterAll(async () => {
      await web.close();
    });

    const media = async () => Number((await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM media'))[0].n);
    const localLogo = async (advertiser: string) =>
      (await use().ctx.db.select<{ l: unknown }>("SELECT local_logo AS l FROM advertisers WHERE module = 'shopnet' AND advertiser = ?", [advertiser]))[0].l;

    it.each([
      ['png', 'image/png', 'png'],
      ['jpg', 'image/jpeg', 'jpg'],
      ['gif', 'image/png', 'png'],
      ['webp', 'image/webp', 'webp'],
    ])("stores the network's %s logo as %s media and points the advertiser at it", async (file, type, ext) => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', `good-${file}`, { logo_url: `${web.origin}/logo.${file}` });
      const result = await ctx.logos.fetch('shopnet', `good-${file}`, { actor: 'test' });
      expect(result).toMatchObject({ fetched: true, source: 'network', source_url: `${web.origin}/logo.${file}`, media: { type, ext } });
      expect(result.logo).toBe(`/media/${result.media.sha256}.${ext}`);
      expect(await localLogo(`good-${file}`)).toBe(`${result.media.sha256}.${ext}`);
      const file2 = await ctx.media.file(result.media.sha256, ext);
      expect(file2.type).toBe(type);
      expect((await ctx.advertisers.get('shopnet', `good-${file}`)).logo).toBe(result.logo);
    });

    it('keeps the logo on file unless forced, and refetches with force', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'kept', { logo_url: `${web.origin}/logo.png` });
      const first = await ctx.logos.fetch('shopnet', 'kept', { actor: 'test' });
      const requests = web.requests.length;
      const again = await ctx.logos.fetch('shopnet', 'kept', { actor: 'test' });
      expect(again).toMatchObject({ fetched: false, source: null, logo: first.logo });
      expect(web.requests.length).toBe(requests);
      const forced = await ctx.logos.fetch('shopnet', 'kept', { actor: 'test', force: true });
      expect(forced).toMatchObject({ fetched: true, source: 'network', logo: first.logo });
      expect(web.requests.length).toBe(requests + 1);
    });

    it('stores one media row for the same picture from two URLs', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'dupe-1', { logo_url: `${web.origin}/logo.png` });
      await addAdvertiser(ctx, 'shopnet', 'dupe-2', { logo_url: `${web.origin}/same.png` });
      const a = await ctx.logos.fetch('shopnet', 'dupe-1', { actor: 'test' });
      const before = await media();
      const b = await ctx.logos.fetch('shopnet', 'dupe-2', { actor: 'test' });
      expect(b.media.sha256).toBe(a.media.sha256);
      expect(await media()).toBe(before);
      expect(await localLogo('dupe-2')).toBe(await localLogo('dupe-1'));
    });

    it.each([
      ['page.html', 'not_an_image'],
      ['logo.svg', 'unsupported_type'],
      ['truncated.png', 'not_an_image'],
      ['bomb.png', 'too_large'],
      ['huge.png', 'too_large'],
      ['loop-a', 'too_many_redirects'],
      ['missing.png', 'http_status'],
    ])('answers svc_logo_not_found when the only source, %s, gives %s, and stores nothing', async (file, reason) => {
      const { ctx } = use();
      const id = `bad-${file}`;
      await addAdvertiser(ctx, 'shopnet', id, { logo_url: `${web.origin}/${file}` });
      const before = await media();
      const err = await failure(ctx.logos.fetch('shopnet', id, { actor: 'test' }));
      expect(err).toMatchObject({ code: 'svc_logo_not_found', status: 422 });
      expect(err.data.tried).toEqual([expect.objectContaining({ source: 'network', reason })]);
      expect(await media()).toBe(before);
      expect(await localLogo(id)).toBeNull();
    });

    it('gives up on a host that never answers and tries no other URL on it', async () => {
      const { ctx } = use();
      const silent = await site({ '/logo.png': { hang: true }, '/': { hang: true } });
      try {
        await addAdvertiser(ctx, 'shopnet', 'silent', { logo_url: `${silent.origin}/logo.png`, site_url: `${silent.origin}/` });
        const err = await failure(ctx.logos.fetch('shopnet', 'silent', { actor: 'test' }));
        expect(err.data.tried).toEqual([
          expect.objectContaining({ source: 'network', reason: 'timeout' }),
          expect.objectContaining({ source: 'home', reason: 'host_unreachable' }),
          expect.objectContaining({ source: 'favicon', reason: 'host_unreachable' }),
        ]);
        expect(silent.requests).toEqual(['/logo.png']);
      } finally {
        await silent.close();
      }
    });

    it("finds the site's best icon on its home page when the network gives no logo", async () => {
      const { ctx } = use();
      const shop = await site({
        '/': {
          type: 'text/html; charset=utf-8',
          body: '<html><head><link rel="icon" href="/small.png" sizes="16x16"><link rel="apple-touch-icon" href="/touch.png"></head></html>',
        },
        '/touch.png': { body: await image('png', 180, 180), type: 'image/png' },
        '/small.png': { body: await image('png', 16, 16), type: 'image/png' },
      });
      try {
        await addAdvertiser(ctx, 'shopnet', 'icons', { site_url: `${shop.origin}/` });
        const result = await ctx.logos.fetch('shopnet', 'icons', { actor: 'test' });
        expect(result).toMatchObject({ source: 'icon', source_url: `${shop.origin}/touch.png`, media: { width: 180, height: 180 } });
        expect(shop.requests).toEqual(['/', '/touch.png']);
      } finally {
        await shop.close();
      }
    });

    it('falls back from a broken network logo to the site, and from bad icons to /favicon.ico (a PNG inside an ICO)', async () => {
      const { ctx } = use();
      const shop = await site({
        '/': { type: 'text/html', body: '<link rel="icon" href="/icon.svg"><link rel="icon" href="/broken.png">' },
        '/broken.png': { body: 'oops', type: 'image/png' },
        '/favicon.ico': {
          body: ico([
            { width: 16, height: 16, data: bmpEntry() },
            { width: 32, height: 32, data: await image('png', 32, 32) },
          ]),
          type: 'image/x-icon',
        },
      });
      try {
        await addAdvertiser(ctx, 'shopnet', 'favicon', { logo_url: `${web.origin}/logo.svg`, domain: shop.origin });
        const result = await ctx.logos.fetch('shopnet', 'favicon', { actor: 'test' });
        expect(result).toMatchObject({ source: 'favicon', source_url: `${shop.origin}/favicon.ico`, media: { type: 'image/png', width: 32 } });
        expect(shop.requests).toEqual(['/', '/broken.png', '/favicon.ico']);
      } finally {
        await shop.close();
      }
    });

    it('answers svc_logo_not_found listing every attempt for a site with no icon at all', async () => {
      const { ctx } = use();
      const shop = await site({ '/': { type: 'text/html', body: '<html><head><title>Shop</title></head></html>' } });
      try {
        await addAdvertiser(ctx, 'shopnet', 'no-icon', { site_url: `${shop.origin}/` });
        const err = await failure(ctx.logos.fetch('shopnet', 'no-icon', { actor: 'test' }));
        expect(err).toMatchObject({
          code: 'svc_logo_not_found',
          status: 422,
          data: {
            module: 'shopnet',
            advertiser: 'no-icon',
            tried: [{ source: 'favicon', url: `${shop.origin}/favicon.ico`, reason: 'http_status', status: 404 }],
          },
        });
        expect(await localLogo('no-icon')).toBeNull();
      } finally {
        await shop.close();
      }
    });

    it('notes a home page that is not HTML and still tries the favicon', async () => {
      const { ctx } = use();
      const shop = await site({ '/': { type: 'application/json', body: '{}' }, '/favicon.ico': { body: await image('gif', 16, 16), type: 'image/gif' } });
      try {
        await addAdvertiser(ctx, 'shopnet', 'json-home', { site_url: `${shop.origin}/` });
        expect(await ctx.logos.fetch('shopnet', 'json-home', { actor: 'test' })).toMatchObject({ source: 'favicon', media: { type: 'image/png' } });
      } finally {
        await shop.close();
      }
    });

    it('answers svc_logo_not_found for an advertiser with no logo URL, site or domain, and 404 for an unknown one', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'bare');
      expect(await failure(ctx.logos.fetch('shopnet', 'bare', { actor: 'test' }))).toMatchObject({ code: 'svc_logo_not_found', data: { tried: [] } });
      expect(await failure(ctx.logos.fetch('shopnet', 'nobody', { actor: 'test' }))).toMatchObject({ code: 'svc_advertiser_not_found', status: 404 });
    });

    it('refuses a private address through the guard and records why', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'private', { logo_url: 'http://10.1.2.3/logo.png', domain: 'http://169.254.169.254' });
      const err = await failure(ctx.logos.fetch('shopnet', 'private', { actor: 'test' }));
      expect(err.data.tried).toEqual([
        expect.objectContaining({ source: 'network', reason: 'private_address' }),
        expect.objectContaining({ source: 'home', reason: 'private_address' }),
        expect.objectContaining({ source: 'favicon', reason: 'private_address' }),
      ]);
    });

    it('records URLs that are not URLs as invalid_url and tries no favicon without a site origin', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'garbled', { logo_url: 'not a url', domain: 'exa mple.com' });
      const err = await failure(ctx.logos.fetch('shopnet', 'garbled', { actor: 'test' }));
      expect(err.data.tried).toEqual([
        { source: 'network', url: 'not a url', reason: 'invalid_url' },
        { source: 'home', url: 'https://exa mple.com/', reason: 'invalid_url' },
      ]);
    });

    it('fires cashtrack.logo.fetched after the logo is stored', async () => {
      const { ctx } = use();
      const seen: unknown[] = [];
      ctx.hooks.addAction(HOOKS.logoFetched, 'test/logos', (result: unknown, meta: unknown) => seen.push([result, meta]));
      await addAdvertiser(ctx, 'shopnet', 'hooked', { logo_url: `${web.origin}/logo.jpg` });
      await ctx.logos.fetch('shopnet', 'hooked', { actor: 'user:7' });
      ctx.hooks.wp.removeAction(HOOKS.logoFetched, 'test/logos');
      expect(seen).toEqual([[expect.objectContaining({ advertiser: 'hooked', fetched: true }), { actor: 'user:7' }]]);
    });

    it('serves stored bytes that decode as the stored type', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'shopnet', 'decode', { logo_url: `${web.origin}/logo.webp` });
      const { media: m } = await ctx.logos.fetch('shopnet', 'decode', { actor: 'test' });
      const file = await ctx.media.file(m.sha256, m.ext);
      expect((await sharp(file.data).metadata()).format).toBe('webp');
      expect(await failure(ctx.media.file(m.sha256, 'png'))).toMatchObject({ code: 'svc_media_not_found', status: 404 });
      expect(await failure(ctx.media.file('nothex', 'png'))).toMatchObject({ code: 'svc_media_not_found' });
      expect(await ctx.media.find('nothex')).toBeNull();
    });
  },
  { 'logos.connect_timeout_ms': 1000, 'logos.timeout_ms': 3000 },
);
