// Test images made on the spot with sharp, and hand-built files sharp would refuse to write
// (a PNG header declaring 50,000 × 50,000 pixels, an ICO around a PNG or a BMP).
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

export type Format = 'png' | 'jpeg' | 'gif' | 'webp';

/** A solid image of the given size and format (JPEG with an EXIF orientation and a comment when asked). */
export async function image(format: Format, width = 64, height = 48, options: { exif?: boolean } = {}): Promise<Buffer> {
  let img = sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 90, alpha: 1 } } });
  if (options.exif) img = img.withMetadata({ orientation: 6, exif: { IFD0: { ImageDescription: 'secret-camera-note' } } });
  return format === 'png' ? img.png().toBuffer() : format === 'jpeg' ? img.jpeg().toBuffer() : format === 'gif' ? img.gif().toBuffer() : img.webp().toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid-looking PNG of a few hundred bytes whose header declares `width` × `height` grey pixels. */
export function pngBomb(width = 50_000, height = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc((width + 1) * 4))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An ICO file holding the given images (PNG bytes, or anything else standing in for a BMP entry). */
export function ico(entries: { width: number; height: number; data: Buffer }[]): Buffer {
  const header = Buffer.alloc(6 + entries.length * 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(entries.length, 4);
  let offset = header.length;
  entries.forEach((e, i) => {
    const at = 6 + i * 16;
    header[at] = e.width >= 256 ? 0 : e.width;
    header[at + 1] = e.height >= 256 ? 0 : e.height;
    header.writeUInt16LE(1, at + 4);
    header.writeUInt16LE(32, at + 6);
    header.writeUInt32LE(e.data.length, at + 8);
    header.writeUInt32LE(offset, at + 12);
    offset += e.data.length;
  });
  return Buffer.concat([header, ...entries.map((e) => e.data)]);
}

/** A BITMAPINFOHEADER-style DIB stand-in (what most favicon.ico entries hold). */
export function bmpEntry(size = 16): Buffer {
  const dib = Buffer.alloc(40 + size * size * 4);
  dib.writeUInt32LE(40, 0);
  dib.writeInt32LE(size, 4);
  dib.writeInt32LE(size * 2, 8);
  dib.writeUInt16LE(1, 12);
  dib.writeUInt16LE(32, 14);
  return dib;
}

export const SVG_WITH_SCRIPT = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.cookie)</script><rect width="10" height="10"/></svg>',
);
