// Media: images stored in the database (logos are small), content-addressed by the sha256 of the
// stored bytes, so every daemon serves the same files and a URL never changes meaning. Rows are
// written once and never updated or deleted: a page body may embed a media URL, and browsers cache
// it as immutable. Bytes reach this service only through the image pipeline (media-images.ts).
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { SelfUrl } from '../../self-url.js';
import { MEDIA_EXTENSIONS, type ProcessedImage } from './images.js';

export { processImage, type ProcessedImage } from './images.js';

export interface Media {
  /** `<sha256>.<ext>`: the file name under /media/, and what an advertiser's `local_logo` holds. */
  name: string;
  sha256: string;
  type: string;
  ext: string;
  width: number;
  height: number;
  bytes: number;
  source_url: string | null;
  fetched_at: string | null;
  created_at: string | null;
  /** Where the file is served: absolute when the daemon knows its public URL, else a path. */
  url: string;
}

/** A file to serve. */
export interface MediaFile {
  sha256: string;
  type: string;
  data: Buffer;
}

export interface MediaServiceDeps {
  db: Database;
  clock: Clock;
  /** The daemon's base URL (server.public_url, else its listening address), or null when unknown (then URLs are paths). */
  selfUrl: Pick<SelfUrl, 'get'>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const FILE_NAME = /^([0-9a-f]{64})\.(png|jpg|webp)$/;

const COLUMNS = 'sha256, type, ext, width, height, bytes, source_url, fetched_at, created_at';

/** Stores and serves media (the `media` table's only writer). */
export class MediaService {
  constructor(private readonly deps: MediaServiceDeps) {}

  /** The public URL of a media file name (`<sha256>.<ext>`). */
  url(name: string): string {
    const base = this.deps.selfUrl.get()?.replace(/\/+$/, '') ?? '';
    return `${base}/media/${name}`;
  }

  /** The URL of a stored `local_logo` value, or null for none (or a value that names no media file). */
  urlOf(name: string | null): string | null {
    return name && FILE_NAME.test(name) ? this.url(name) : null;
  }

  /**
   * Stores a processed image (a row whose sha256 exists already is kept as it is: same bytes) and
   * returns it, with `created` telling whether this call wrote it. Run it in the transaction that
   * also writes the reference to it, so neither exists without the other.
   */
  async store(image: ProcessedImage, sourceUrl: string | null, t: Transaction, options: { private?: boolean } = {}): Promise<Media & { created: boolean }> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const source = sourceUrl === null ? null : sourceUrl.slice(0, 2000);
    const hidden = options.private === true;
    const { affected } = await db.execute(
      db.insertIgnore('media', ['sha256', 'type', 'ext', 'width', 'height', 'bytes', 'data', 'source_url', 'fetched_at', 'created_at', 'private']),
      [image.sha256, image.type, image.ext, image.width, image.height, image.bytes, image.data, source, now, now, hidden],
      t,
    );
    // The same bytes stored publicly (a logo) are public: they are no secret once published.
    if (!hidden && affected === 0) await db.execute('UPDATE media SET private = ? WHERE sha256 = ? AND private = ?', [false, image.sha256, true], t);
    const media = await this.find(image.sha256, t);
    if (!media) throw new ServiceError('svc_internal_error', 'The stored image could not be read back.', 500);
    return { ...media, created: affected === 1 };
  }

  /** One media record (no bytes) by sha256, or null. */
  async find(sha256: string, t?: Transaction): Promise<Media | null> {
    if (!SHA256.test(sha256)) return null;
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM media WHERE sha256 = ?`, [sha256], t);
    return row ? this.shape(row) : null;
  }

  /** The file to serve for `<sha256>.<ext>`; 404 svc_media_not_found for anything else (a wrong extension included). */
  async file(sha256: string, ext: string): Promise<MediaFile> {
    const type = Object.hasOwn(MEDIA_EXTENSIONS, ext) ? MEDIA_EXTENSIONS[ext] : undefined;
    if (!type || !SHA256.test(sha256)) throw notFound();
    const [row] = await this.deps.db.select<{ type: unknown; data: unknown }>('SELECT type, data FROM media WHERE sha256 = ? AND ext = ? AND private = ?', [
      sha256,
      ext,
      false,
    ]);
    if (!row || !Buffer.isBuffer(row.data)) throw notFound();
    return { sha256, type: String(row.type), data: row.data };
  }

  /** A private file (a claim's receipt) by its name `<sha256>.<ext>`, for administrators' routes only; null when there is none. */
  async privateFile(name: string): Promise<(MediaFile & { width: number; height: number }) | null> {
    const m = FILE_NAME.exec(name);
    if (!m) return null;
    const [row] = await this.deps.db.select<Record<string, unknown>>('SELECT type, data, width, height FROM media WHERE sha256 = ? AND ext = ?', [m[1], m[2]]);
    if (!row || !Buffer.isBuffer(row.data)) return null;
    return { sha256: m[1], type: String(row.type), data: row.data, width: toInt(row.width), height: toInt(row.height) };
  }

  /** A private file's record (type, size, dimensions, dates; never the bytes) by its name `<sha256>.<ext>`, or null. */
  async describePrivate(name: string): Promise<Media | null> {
    const m = FILE_NAME.exec(name);
    return m ? this.find(m[1]) : null;
  }

  /**
   * Deletes a private file (a receipt no claim names any more, at its member's erasure) in `t`;
   * a file that was also stored publicly (a logo with the same bytes) is no secret and stays.
   */
  async removePrivate(name: string, t: Transaction): Promise<boolean> {
    const m = FILE_NAME.exec(name);
    if (!m) return false;
    const { affected } = await this.deps.db.execute('DELETE FROM media WHERE sha256 = ? AND ext = ? AND private = ?', [m[1], m[2], true], t);
    return affected > 0;
  }

  /** How many media files there are and their total size (the bulk logos state). */
  async totals(): Promise<{ files: number; bytes: number }> {
    const [row] = await this.deps.db.select<{ n: unknown; b: unknown }>('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM media');
    return { files: toInt(row.n), bytes: toInt(row.b) };
  }

  private shape(r: Record<string, unknown>): Media {
    const name = `${String(r.sha256)}.${String(r.ext)}`;
    return {
      name,
      sha256: String(r.sha256),
      type: String(r.type),
      ext: String(r.ext),
      width: toInt(r.width),
      height: toInt(r.height),
      bytes: toInt(r.bytes),
      source_url: r.source_url === null || r.source_url === undefined ? null : String(r.source_url),
      fetched_at: toIso(r.fetched_at),
      created_at: toIso(r.created_at),
      url: this.url(name),
    };
  }
}

function notFound(): ServiceError {
  return new ServiceError('svc_media_not_found', 'Media not found.', 404);
}
