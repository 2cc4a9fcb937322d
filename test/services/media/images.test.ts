import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/errors.js';
import { pngInsideIco, processImage, type ImageLimits } from '../../../src/services/media/images.js';
import { bmpEntry, ico, image, pngBomb, SVG_WITH_SCRIPT } from '../../helpers/images.js';

const limits: ImageLimits = { maxInputPixels: 25_000_000, maxSize: 512, maxStoredBytes: 1024 * 1024 };

async function refusal(input: Buffer, bounds: ImageLimits = limits): Promise<ServiceError> {
  const err = await processImage(input, bounds).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  expect(err).toMatchObject({ code: 'svc_fetch_blocked', status: 422 });
  return err as ServiceError;
}

describe('the image pipeline', () => {
  it.each([
    ['png', 'image/png', 'png'],
    ['gif', 'image/png', 'png'],
    ['jpeg', 'image/jpeg', 'jpg'],
    ['webp', 'image/webp', 'webp'],
  ] as const)('re-encodes a good %s as %s', async (format, type, ext) => {
    const out = await processImage(await image(format, 80, 60), limits);
    expect(out).toMatchObject({ type, ext, width: 80, height: 60, bytes: out.data.length });
    expect(out.sha256).toMatch(/^[0-9a-f]{64}$/);
    const meta = await sharp(out.data).metadata();
    expect(meta.format).toBe(ext === 'jpg' ? 'jpeg' : ext);
  });

  it('fits a large image into the box without enlarging a small one', async () => {
    const big = await processImage(await image('png', 2000, 1000), limits);
    expect([big.width, big.height]).toEqual([512, 256]);
    const small = await processImage(await image('png', 20, 10), limits);
    expect([small.width, small.height]).toEqual([20, 10]);
  });

  it('applies the EXIF orientation and strips the metadata', async () => {
    const out = await processImage(await image('jpeg', 60, 40, { exif: true }), limits);
    expect([out.width, out.height]).toEqual([40, 60]);
    const meta = await sharp(out.data).metadata();
    expect(meta.exif).toBeUndefined();
    expect(out.data.includes(Buffer.from('secret-camera-note'))).toBe(false);
  });

  it('drops a script appended to a PNG (a polyglot) by re-encoding', async () => {
    const polyglot = Buffer.concat([await image('png'), Buffer.from('<script>alert(1)</script>')]);
    const out = await processImage(polyglot, limits);
    expect(out.data.includes(Buffer.from('<script>'))).toBe(false);
  });

  it('gives the same bytes and hash for the same picture', async () => {
    const a = await processImage(await image('png'), limits);
    const b = await processImage(await image('png'), limits);
    expect(a.sha256).toBe(b.sha256);
  });

  it('refuses an SVG carrying a script as unsupported_type', async () => {
    const err = await refusal(SVG_WITH_SCRIPT);
    expect(err.data).toMatchObject({ reason: 'unsupported_type', type: 'image/svg+xml' });
  });

  it('tells an SVG behind a BOM, comments and a doctype from other text, and scans a crafted run of comments in one pass', async () => {
    const svg = Buffer.from('\uFEFF  <!-- a logo --><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x"><!-- -->\n<SVG viewBox="0 0 1 1"></SVG>');
    expect((await refusal(svg)).data).toMatchObject({ reason: 'unsupported_type', type: 'image/svg+xml' });
    expect((await refusal(Buffer.from('<!-- unclosed <svg>'))).data.reason).toBe('not_an_image');
    expect((await refusal(Buffer.from(`${'<!---->'.repeat(580)}x`))).data.reason).toBe('not_an_image');
    expect((await refusal(Buffer.from('<svgfoo/>'))).data.reason).toBe('not_an_image');
  });

  it('refuses HTML, an empty body and a PDF as not_an_image', async () => {
    expect((await refusal(Buffer.from('<!doctype html><html><body>Hello</body></html>'))).data.reason).toBe('not_an_image');
    expect((await refusal(Buffer.alloc(0))).data.reason).toBe('not_an_image');
    expect((await refusal(Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n'))).data).toMatchObject({ reason: 'not_an_image', type: 'application/pdf' });
  });

  it('refuses a TIFF and a BMP-only icon as unsupported_type', async () => {
    const tiff = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } })
      .tiff()
      .toBuffer();
    expect((await refusal(tiff)).data).toMatchObject({ reason: 'unsupported_type', type: 'image/tiff' });
    expect((await refusal(ico([{ width: 16, height: 16, data: bmpEntry() }]))).data.reason).toBe('unsupported_type');
  });

  it('refuses a truncated PNG as not_an_image', async () => {
    const png = await image('png', 300, 200);
    expect((await refusal(png.subarray(0, Math.floor(png.length / 2)))).data.reason).toBe('not_an_image');
    expect((await refusal(png.subarray(0, 40))).data.reason).toBe('not_an_image');
  });

  it('refuses a 50,000 × 50,000 PNG header (a decompression bomb) as too_large without decoding it', async () => {
    const bomb = pngBomb();
    expect(bomb.length).toBeLessThan(2000);
    const err = await refusal(bomb);
    expect(err.data).toMatchObject({ reason: 'too_large', width: 50_000, height: 50_000, max_pixels: 25_000_000 });
  });

  it('refuses a re-encoded image over the stored size as too_large', async () => {
    const noisy = await sharp(randomBytes(300 * 300 * 3), { raw: { width: 300, height: 300, channels: 3 } })
      .png()
      .toBuffer();
    const err = await refusal(noisy, { ...limits, maxStoredBytes: 20_000 });
    expect(err.data).toMatchObject({ reason: 'too_large', max_bytes: 20_000 });
  });

  it('takes the largest PNG out of an icon file and re-encodes it', async () => {
    const small = await image('png', 16, 16);
    const large = await image('png', 48, 48);
    const file = ico([
      { width: 16, height: 16, data: bmpEntry() },
      { width: 16, height: 16, data: small },
      { width: 48, height: 48, data: large },
    ]);
    expect(pngInsideIco(file)?.equals(large)).toBe(true);
    const out = await processImage(file, limits);
    expect(out).toMatchObject({ type: 'image/png', width: 48, height: 48, source_type: 'image/x-icon' });
  });

  it('ignores icon entries that point outside the file', async () => {
    const file = ico([{ width: 16, height: 16, data: await image('png', 16, 16) }]);
    file.writeUInt32LE(10_000, 6 + 12);
    expect(pngInsideIco(file)).toBeNull();
    expect(pngInsideIco(Buffer.from([1, 2, 3]))).toBeNull();
  });
});
