// Exports as files: an administrator asks for the rows of a list (orders, ledger entries, payouts,
// balances, clicks, claims) under that list's filters, and an `exports.run` job streams them into a
// CSV or JSON Lines file under `<data_dir>/exports/`. The rows are read through each owning domain's
// keyset read (id order, `chunkSize` at a time), so the table is never loaded whole; the file is
// written owner-only under a temporary name and renamed once complete. Files are kept
// `retentionDays` after they are written and pruned nightly (maintenance.prune) with their rows.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { PassThrough, type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../../clock.js';
import { csvStream } from '../../csv-cells.js';
import type { Database } from '../../db/database.js';
import { ListWhere, orderClause, pageClause, type OneOrMany } from '../../db/lists.js';
import { toDate, toInt, toIso } from '../../db/values.js';
import { invalidInput, ServiceError } from '../../errors.js';
import { privateDir } from '../../private-files.js';
import type { JobHandle, JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import { EXPORT_FORMATS, EXPORT_KINDS, KINDS, type ExportFormat, type ExportKind, type ExportSources } from './kinds.js';

export { EXPORT_FORMATS, EXPORT_KINDS, type ExportFormat, type ExportKind, type ExportSources };

export const EXPORT_STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
export const EXPORT_JOB = 'exports.run';

/** An export as the API and CLI show it. */
export interface Export {
  id: number;
  kind: ExportKind;
  format: ExportFormat;
  /** The filters exactly as validated: POST them again with the kind and format to repeat the export. */
  filters: Record<string, unknown>;
  status: ExportStatus;
  rows: number;
  bytes: number;
  /** The name the download is offered under (null until the file is written). */
  file_name: string | null;
  job_id: number | null;
  actor: string;
  created_at: string;
  finished_at: string | null;
  /** When the file (and this record) is pruned. */
  expires_at: string | null;
  error: string | null;
}

export interface ExportFilters {
  status?: OneOrMany<ExportStatus>;
  kind?: OneOrMany<ExportKind>;
  orderby?: 'id' | 'created_at';
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** What to export; every other key of a request is a filter of the kind's list. */
export type ExportRequest = { kind: ExportKind; format?: ExportFormat };

export interface ExportServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  jobs: JobService;
  sources: ExportSources;
  /** `<data_dir>/exports`. */
  dir: string;
  /** `exports.retention_days`. */
  retentionDays: number;
  /** Rows read per query (the keyset chunk). */
  chunkSize?: number;
}

const COLUMNS = 'id, kind, format, params, status, row_count, bytes, file_name, job_id, actor, created_at, finished_at, expires_at, error';
const ORDERBY = { id: 'id', created_at: 'created_at' } as const;
const CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/jsonl; charset=utf-8' };
const DAY_MS = 86_400_000;

function shape(r: Record<string, unknown>): Export {
  const kind = String(r.kind) as ExportKind;
  const format = String(r.format) as ExportFormat;
  return {
    id: toInt(r.id),
    kind,
    format,
    filters: JSON.parse(String(r.params)) as Record<string, unknown>,
    status: String(r.status) as ExportStatus,
    rows: toInt(r.row_count),
    bytes: toInt(r.bytes),
    file_name: r.file_name === null || r.file_name === undefined ? null : downloadName(toInt(r.id), kind, format, toDate(r.created_at)!),
    job_id: r.job_id === null || r.job_id === undefined ? null : toInt(r.job_id),
    actor: String(r.actor),
    created_at: toIso(r.created_at)!,
    finished_at: toIso(r.finished_at),
    expires_at: toIso(r.expires_at),
    error: r.error === null || r.error === undefined ? null : String(r.error),
  };
}

/** The name a download is offered under: letters, digits, dashes and one dot only (safe in any header or file system). */
export function downloadName(id: number, kind: ExportKind, format: ExportFormat, at: Date): string {
  const stamp = at.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
  return `cashtrack-${kind.replace(/_/g, '-')}-${stamp}-${id}.${format}`;
}

/** The file on disk (the rows keep only this name; the directory is the configured one). */
function storedName(id: number, kind: ExportKind, format: ExportFormat): string {
  return `export-${id}-${kind}.${format}`;
}

/** Requests, runs, lists, serves and prunes exports. */
export class ExportService {
  constructor(private readonly deps: ExportServiceDeps) {}

  get dir(): string {
    return this.deps.dir;
  }

  /**
   * The kind's filters as its list route takes them, without paging and sort: 400
   * rest_invalid_param for an unknown or bad one, as the list route answers.
   */
  validateFilters(kind: ExportKind, filters: Record<string, unknown>): Record<string, unknown> {
    const spec = KINDS[kind];
    if (!spec) throw new ServiceError('svc_unknown_export_kind', `There is no export of kind "${String(kind).slice(0, 40)}".`, 400, { kinds: EXPORT_KINDS });
    const { value, error } = spec.filters().validate(filters, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
    if (error) throw invalidInput(error);
    return value as Record<string, unknown>;
  }

  /**
   * Records an export and queues its `exports.run` job in one transaction (202 with the export).
   * The filters are checked first, by the kind's schema and by a count through its domain (an
   * unknown member or currency is refused now, not when the job runs).
   */
  async create(input: ExportRequest & Record<string, unknown>, actor: string): Promise<Export> {
    const { kind, format = 'csv', ...rest } = input;
    if (!(EXPORT_FORMATS as readonly string[]).includes(format))
      throw new ServiceError('svc_unknown_export_format', `There is no export format "${String(format).slice(0, 40)}".`, 400, { formats: EXPORT_FORMATS });
    const filters = this.validateFilters(kind, rest);
    await KINDS[kind].total(this.deps.sources, filters);
    const { db, clock, jobs } = this.deps;
    const now = clock.now();
    const id = await db.transaction(async (t) => {
      const { insertId } = await db.execute(
        "INSERT INTO exports (kind, format, params, status, row_count, bytes, actor, created_at, expires_at) VALUES (?, ?, ?, 'queued', 0, 0, ?, ?, ?)",
        [kind, format, JSON.stringify(filters), actor.slice(0, 64), now, new Date(now.getTime() + this.deps.retentionDays * DAY_MS)],
        t,
      );
      const job = await jobs.enqueue(EXPORT_JOB, { export_id: insertId }, actor, { transaction: t });
      await db.execute('UPDATE exports SET job_id = ? WHERE id = ?', [job.id, insertId], t);
      return insertId!;
    });
    this.deps.logger.info('exports', `Export ${id} (${kind}, ${format}) requested`, { export_id: id, kind, format, actor });
    return this.get(id);
  }

  async get(id: number): Promise<Export> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM exports WHERE id = ?`, [id]);
    if (!row) throw new ServiceError('svc_export_not_found', `Export ${id} not found.`, 404);
    return shape(row);
  }

  /** Newest first, filtered by status and kind, paged. */
  async list(filters: ExportFilters): Promise<{ items: Export[]; total: number }> {
    const where = new ListWhere().anyOf('status', filters.status).anyOf('kind', filters.kind);
    const order = orderClause(ORDERBY, filters, 'id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM exports ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM exports ${where.sql}`, where.params),
    ]);
    return { items: rows.map(shape), total: toInt(count[0].n) };
  }

  /**
   * The finished file to download: 404 svc_export_not_found, 409 svc_export_not_ready while it is
   * being written (or when it failed), 410 svc_export_expired once past its retention, 410
   * svc_export_file_missing when the file is gone from the data directory.
   */
  async open(id: number): Promise<{ export: Export; stream: ReadStream; size: number; contentType: string }> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM exports WHERE id = ?`, [id]);
    if (!row) throw new ServiceError('svc_export_not_found', `Export ${id} not found.`, 404);
    const exp = shape(row);
    if (exp.status !== 'done' || row.file_name === null)
      throw new ServiceError('svc_export_not_ready', `Export ${id} has no file: it is ${exp.status}.`, 409, { status: exp.status });
    if (exp.expires_at && Date.parse(exp.expires_at) <= this.deps.clock.now().getTime())
      throw new ServiceError('svc_export_expired', `Export ${id} expired at ${exp.expires_at}; its file is deleted.`, 410, { expires_at: exp.expires_at });
    const path = join(this.deps.dir, String(row.file_name));
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      throw new ServiceError('svc_export_file_missing', `The file of export ${id} is no longer in the data directory.`, 410);
    }
    return { export: exp, stream: createReadStream(path), size, contentType: CONTENT_TYPES[exp.format] };
  }

  /** Deletes an export and its file; a queued or running one's job is cancelled first. 404 svc_export_not_found. */
  async delete(id: number, actor: string): Promise<void> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM exports WHERE id = ?`, [id]);
    if (!row) throw new ServiceError('svc_export_not_found', `Export ${id} not found.`, 404);
    const exp = shape(row);
    if ((exp.status === 'queued' || exp.status === 'running') && exp.job_id !== null) {
      try {
        await this.deps.jobs.cancel(exp.job_id, actor);
      } catch (err) {
        // A job that finished meanwhile (or was pruned) has nothing left to cancel.
        if (!(err instanceof ServiceError)) throw err;
      }
    }
    await this.deps.db.execute('DELETE FROM exports WHERE id = ?', [id]);
    if (row.file_name !== null) await removeFile(join(this.deps.dir, String(row.file_name)));
    this.deps.logger.info('exports', `Export ${id} deleted`, { export_id: id, actor });
  }

  /** Deletes finished exports past their expiry with their files (the nightly prune); answers how many. */
  async prune(): Promise<number> {
    const now = this.deps.clock.now();
    const rows = await this.deps.db.select<{ id: unknown; file_name: unknown }>(
      "SELECT id, file_name FROM exports WHERE expires_at <= ? AND status IN ('done', 'failed', 'cancelled') ORDER BY id",
      [now],
    );
    for (const r of rows) {
      if (r.file_name !== null) await removeFile(join(this.deps.dir, String(r.file_name)));
      await this.deps.db.execute('DELETE FROM exports WHERE id = ?', [toInt(r.id)]);
    }
    return rows.length;
  }

  /**
   * Writes the export's file (the `exports.run` job): every row of its filters, chunk by chunk in
   * key order, into a temporary owner-only file renamed when complete. A job redone after a crash
   * starts over (the temporary file of the earlier attempt is replaced).
   */
  async run(exportId: number, job: JobHandle): Promise<{ export_id: number; rows: number; bytes: number }> {
    const { db, clock } = this.deps;
    const [row] = await db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM exports WHERE id = ?`, [exportId]);
    if (!row) throw new ServiceError('svc_export_not_found', `Export ${exportId} not found (deleted before it ran).`, 404);
    const exp = shape(row);
    const spec = KINDS[exp.kind];
    const filters = this.validateFilters(exp.kind, exp.filters);
    await db.execute("UPDATE exports SET status = 'running', error = NULL WHERE id = ?", [exportId]);
    privateDir(this.deps.dir);
    const name = storedName(exportId, exp.kind, exp.format);
    const final = join(this.deps.dir, name);
    const temp = join(this.deps.dir, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      job.setTotal(await spec.total(this.deps.sources, filters));
      const rows = await this.write(temp, exp.format, spec, filters, job);
      const { size } = await stat(temp);
      await rename(temp, final);
      const finished = clock.now();
      const { affected } = await db.execute(
        "UPDATE exports SET status = 'done', row_count = ?, bytes = ?, file_name = ?, finished_at = ?, expires_at = ? WHERE id = ?",
        [rows, size, name, finished, new Date(finished.getTime() + this.deps.retentionDays * DAY_MS), exportId],
      );
      // Deleted while it ran: the file goes too.
      if (affected === 0) await removeFile(final);
      this.deps.logger.info('exports', `Export ${exportId} written: ${rows} rows`, { export_id: exportId, kind: exp.kind, rows, bytes: size });
      return { export_id: exportId, rows, bytes: size };
    } catch (err) {
      await removeFile(temp);
      const stopped = job.signal.aborted;
      const reason = (job.signal.reason as { reason?: string } | undefined)?.reason;
      // Shutdown or a lost lease: the job runs again and the export with it.
      if (stopped && reason !== 'cancelled') throw err;
      const message = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
      await db.execute('UPDATE exports SET status = ?, error = ?, finished_at = ? WHERE id = ?', [
        stopped ? 'cancelled' : 'failed',
        message,
        clock.now(),
        exportId,
      ]);
      throw err;
    }
  }

  private async write(path: string, format: ExportFormat, spec: (typeof KINDS)[ExportKind], filters: Record<string, unknown>, job: JobHandle): Promise<number> {
    await mkdir(this.deps.dir, { recursive: true, mode: 0o700 });
    const file = createWriteStream(path, { mode: 0o600, flags: 'w' });
    const csv = format === 'csv' ? csvStream(spec.columns) : null;
    const sink: Writable & Readable = csv ? csv.stream : new PassThrough();
    // The pipeline owns the errors of both ends: a full disk fails the write below, not the process.
    const piped = pipeline(sink, batches(), file);
    piped.catch(() => undefined);
    const put = (item: unknown): boolean => (csv ? csv.write(spec.cells(item)) : sink.write(`${JSON.stringify(item)}\n`));
    const chunk = this.deps.chunkSize ?? 2000;
    let cursor = spec.start;
    let rows = 0;
    try {
      for (;;) {
        job.throwIfStopped();
        const items = await spec.next(this.deps.sources, filters, cursor, chunk);
        let waiting = false;
        for (const item of items) if (!put(item)) waiting = true;
        if (waiting) await once(sink, 'drain');
        rows += items.length;
        job.progress({ done: items.length });
        if (items.length < chunk) break;
        cursor = spec.cursor(items[items.length - 1]);
      }
      sink.end();
      await piped;
      return rows;
    } catch (err) {
      sink.destroy();
      file.destroy();
      throw err;
    }
  }
}

/** Gathers the writer's many small chunks (a row each) into ~64 KB writes: one system call per batch, not per row. */
function batches(size = 64 * 1024): Transform {
  let held: Buffer[] = [];
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      held.push(chunk);
      bytes += chunk.length;
      if (bytes >= size) {
        const out = Buffer.concat(held, bytes);
        held = [];
        bytes = 0;
        done(null, out);
      } else done();
    },
    flush(done) {
      done(null, bytes ? Buffer.concat(held, bytes) : undefined);
    },
  });
}

async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
