import { expect, it } from 'vitest';
import { homePage } from '../../../src/services/logos/index.js';
import { processImage } from '../../../src/services/media/images.js';
import { describeEachDialect } from '../../helpers/context.js';
import { image } from '../../helpers/images.js';

const limits = { maxInputPixels: 25_000_000, maxSize: 512, maxStoredBytes: 1024 * 1024 };

describeEachDialect('media', (use) => {
  it('stores a processed image once, says whether this call wrote it, and keeps the first source URL', async () => {
    const { ctx } = use();
    const img = await processImage(await image('webp', 33, 21), limits);
    const first = await ctx.db.transaction((t) => ctx.media.store(img, null, t));
    expect(first).toMatchObject({
      created: true,
      name: `${img.sha256}.webp`,
      type: 'image/webp',
      width: 33,
      height: 21,
      bytes: img.bytes,
      source_url: null,
      url: `/media/${img.sha256}.webp`,
    });
    const second = await ctx.db.transaction((t) => ctx.media.store(img, 'https://cdn.example/other.webp', t));
    expect(second).toMatchObject({ created: false, source_url: null });
    expect(await ctx.media.find(img.sha256)).toMatchObject({ name: first.name, fetched_at: first.fetched_at });
    const file = await ctx.media.file(img.sha256, 'webp');
    expect(file.data.equals(img.data)).toBe(true);
    expect(await ctx.media.totals()).toMatchObject({ files: expect.any(Number), bytes: expect.any(Number) });
  });

  it('rolls the media row back with the transaction that failed to use it', async () => {
    const { ctx } = use();
    const img = await processImage(await image('png', 17, 17), limits);
    await expect(
      ctx.db.transaction(async (t) => {
        const m = await ctx.media.store(img, 'https://a.example/x.png', t);
        await ctx.advertisers.setLocalLogo('nonet', 'nobody', m.name, t);
      }),
    ).rejects.toMatchObject({ code: 'svc_advertiser_not_found' });
    expect(await ctx.media.find(img.sha256)).toBeNull();
  });

  it('gives a URL only for a stored file name and 404 svc_media_not_found for any other name', async () => {
    const { ctx } = use();
    const sha = 'a'.repeat(64);
    expect(ctx.media.urlOf(`${sha}.png`)).toBe(`/media/${sha}.png`);
    expect(ctx.media.urlOf('logos/6001.png')).toBeNull();
    expect(ctx.media.urlOf(null)).toBeNull();
    for (const ext of ['svg', 'constructor', '__proto__', 'PNG'])
      await expect(ctx.media.file(sha, ext)).rejects.toMatchObject({ code: 'svc_media_not_found', status: 404 });
    await expect(ctx.media.file(sha, 'png')).rejects.toMatchObject({ code: 'svc_media_not_found' });
  });
});

it("takes a shop's home page from its site URL, else https on its domain", () => {
  expect(homePage({ site_url: 'https://www.shop.example/en/', domain: 'shop.example' })).toBe('https://www.shop.example/en/');
  expect(homePage({ site_url: null, domain: 'shop.example' })).toBe('https://shop.example/');
  expect(homePage({ site_url: null, domain: 'http://shop.example:8080' })).toBe('http://shop.example:8080');
  expect(homePage({ site_url: null, domain: null })).toBeNull();
});
