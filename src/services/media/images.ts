// The image pipeline every logo goes through before it is stored: bytes are checked, never trusted.
// The type is sniffed from the bytes (PNG, JPEG, GIF, WebP; an ICO only for a PNG it carries),
// the pixel count is bounded before anything is decoded, and the image is decoded and re-encoded
// into a bounded box with no metadata. What reaches a browser is therefore always a fresh PNG,
// JPEG or WebP written by libvips: an appended script (a polyglot), EXIF, ICC and comments, a
// truncated tail or a decompression bomb never survive. SVG is refused (it is a document that can
// carry script, not pixels). A file that sniffs as an image but does not decode (truncated,
// damaged, a header of one type over another) is `not_an_image` too. The output format follows the input: PNG for PNG and GIF (lossless,
// keeps transparency; a GIF keeps its first frame), JPEG for JPEG, WebP for WebP.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type Sharp from 'sharp';
import type { Metadata, OutputInfo } from 'sharp';
import { fetchBlocked } from '../../outbound/index.js';

// sharp (libvips) and file-type are loaded with the first image: a command or a daemon that
// fetches no logo never pays for them.
const require = createRequire(import.meta.url);
let loaded: typeof Sharp | null = null;
function sharp(...args: Parameters<typeof Sharp>): ReturnType<typeof Sharp> {
  if (!loaded) {
    loaded = require('sharp') as typeof Sharp;
    // Two cores shared with the database and the daemon: one libvips thread, no cache of decoded images.
    loaded.concurrency(1);
    loaded.cache(false);
  }
  return loaded(...args);
}

export const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type MediaType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The stored file's type by its extension (what `GET /media/{sha256}.{ext}` serves). */
export const MEDIA_EXTENSIONS: Readonly<Record<string, MediaType>> = Object.freeze({ png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' });

export interface ImageLimits {
  /** Decoding is refused above this many pixels (width × height of the input). */
  maxInputPixels: number;
  /** The box the output fits in (both sides), never enlarged. */
  maxSize: number;
  /** The re-encoded file may not be larger than this. */
  maxStoredBytes: number;
}

export interface ProcessedImage {
  sha256: string;
  type: MediaType;
  ext: 'png' | 'jpg' | 'webp';
  width: number;
  height: number;
  bytes: number;
  data: Buffer;
  /** The type the input was sniffed as. */
  source_type: string;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A text document that is an SVG (optionally after a BOM, an XML declaration, comments or a
 * doctype). A plain scan, not a regular expression: nested repetition over comments would
 * backtrack exponentially on a crafted body.
 */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  let at = 0;
  for (;;) {
    while (at < head.length && /\s/.test(head[at])) at++;
    const rest = head.slice(at, at + 9).toLowerCase();
    const close = rest.startsWith('<?xml') ? '?>' : rest.startsWith('<!--') ? '-->' : rest.startsWith('<!doctype') ? '>' : null;
    if (!close) break;
    const end = head.indexOf(close, at + 2);
    if (end < 0) return false;
    at = end + close.length;
  }
  return /^<svg[\s>]/i.test(head.slice(at, at + 5));
}

/**
 * The largest PNG image inside an ICO file, or null when it holds only BMP images (which libvips
 * cannot decode: those icons are refused as `unsupported_type`). Entries are bounds-checked
 * against the file; the PNG found goes through the whole pipeline like any other input.
 */
export function pngInsideIco(ico: Buffer): Buffer | null {
  if (ico.length < 6 || ico.readUInt16LE(0) !== 0 || ico.readUInt16LE(2) !== 1) return null;
  const count = ico.readUInt16LE(4);
  let best: { data: Buffer; area: number } | null = null;
  for (let i = 0; i < count && 6 + (i + 1) * 16 <= ico.length; i++) {
    const entry = 6 + i * 16;
    const size = ico.readUInt32LE(entry + 8);
    const offset = ico.readUInt32LE(entry + 12);
    if (size < PNG_SIGNATURE.length || offset + size > ico.length) continue;
    const data = ico.subarray(offset, offset + size);
    if (!data.subarray(0, 8).equals(PNG_SIGNATURE)) continue;
    // 0 in the directory means 256 pixels.
    const area = (ico[entry] || 256) * (ico[entry + 1] || 256);
    if (!best || area > best.area) best = { data, area };
  }
  return best ? best.data : null;
}

/** Sniffs, bounds, decodes and re-encodes; every refusal is 422 svc_fetch_blocked with a `reason`. */
export async function processImage(input: Buffer, limits: ImageLimits): Promise<ProcessedImage> {
  if (input.length === 0) throw fetchBlocked('not_an_image', 'The file is empty.');
  const { fileTypeFromBuffer } = await import('file-type');
  const sniffed = await fileTypeFromBuffer(input);
  // file-type sees an SVG as nothing or as XML: told apart here only to say why it is refused.
  if ((!sniffed || sniffed.mime === 'application/xml') && looksLikeSvg(input))
    throw fetchBlocked('unsupported_type', 'SVG images are not accepted (only PNG, JPEG, GIF and WebP).', { type: 'image/svg+xml' });
  if (!sniffed) throw fetchBlocked('not_an_image', 'The file is not an image.');
  if (sniffed.mime === 'image/x-icon' || sniffed.mime === 'image/vnd.microsoft.icon') {
    const inner = pngInsideIco(input);
    if (!inner)
      throw fetchBlocked('unsupported_type', 'The icon holds only BMP images, which are not accepted (only PNG, JPEG, GIF and WebP).', { type: sniffed.mime });
    const image = await processImage(inner, limits);
    return { ...image, source_type: sniffed.mime };
  }
  if (!(MEDIA_TYPES as readonly string[]).includes(sniffed.mime)) {
    if (sniffed.mime.startsWith('image/'))
      throw fetchBlocked('unsupported_type', `Images of type ${sniffed.mime} are not accepted (only PNG, JPEG, GIF and WebP).`, { type: sniffed.mime });
    throw fetchBlocked('not_an_image', `The file is not an image (${sniffed.mime}).`, { type: sniffed.mime });
  }
  // The header is read first with no pixel limit, so that a bomb is told apart from a broken file.
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false, failOn: 'error' }).metadata();
  } catch {
    throw fetchBlocked('not_an_image', 'The image cannot be read: it is damaged or truncated.', { type: sniffed.mime });
  }
  const format = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' }[String(meta.format)];
  if (format !== sniffed.mime) throw fetchBlocked('not_an_image', 'The image does not decode as the type its bytes announce.', { type: sniffed.mime });
  const pixels = (meta.width ?? 0) * (meta.height ?? 0);
  if (!meta.width || !meta.height) throw fetchBlocked('not_an_image', 'The image has no dimensions.', { type: sniffed.mime });
  if (pixels > limits.maxInputPixels) {
    throw fetchBlocked('too_large', `The image is ${meta.width}×${meta.height} pixels; at most ${limits.maxInputPixels} pixels are decoded.`, {
      width: meta.width,
      height: meta.height,
      max_pixels: limits.maxInputPixels,
    });
  }
  const [type, ext] =
    sniffed.mime === 'image/jpeg'
      ? (['image/jpeg', 'jpg'] as const)
      : sniffed.mime === 'image/webp'
        ? (['image/webp', 'webp'] as const)
        : (['image/png', 'png'] as const);
  let out: { data: Buffer; info: OutputInfo };
  try {
    // failOn 'error': a truncated or corrupt body fails here instead of giving a half-grey picture.
    let pipeline = sharp(input, { limitInputPixels: limits.maxInputPixels, failOn: 'error', animated: false })
      .rotate()
      .resize({ width: limits.maxSize, height: limits.maxSize, fit: 'inside', withoutEnlargement: true });
    pipeline =
      type === 'image/jpeg'
        ? pipeline.jpeg({ quality: 85, mozjpeg: true })
        : type === 'image/webp'
          ? pipeline.webp({ quality: 85, effort: 4 })
          : pipeline.png({ compressionLevel: 9, adaptiveFiltering: true });
    out = await pipeline.toBuffer({ resolveWithObject: true });
  } catch {
    throw fetchBlocked('not_an_image', 'The image cannot be decoded: it is damaged or truncated.', { type: sniffed.mime });
  }
  if (out.data.length > limits.maxStoredBytes) {
    throw fetchBlocked('too_large', `The re-encoded image has ${out.data.length} bytes; at most ${limits.maxStoredBytes} are stored.`, {
      bytes: out.data.length,
      max_bytes: limits.maxStoredBytes,
    });
  }
  return {
    sha256: createHash('sha256').update(out.data).digest('hex'),
    type,
    ext,
    width: out.info.width,
    height: out.info.height,
    bytes: out.data.length,
    data: out.data,
    source_type: sniffed.mime,
  };
}
