// `cashtrack db backup FILE`: a consistent copy of the SQLite database taken while the daemon runs,
// through SQLite's online backup API (the copy is one point in time: a write committed during the
// copy restarts it, and WAL lets the daemon's writers go on meanwhile). The copy is written beside
// the target under a temporary name, made a single file (no -wal), checked with `PRAGMA integrity_check`,
// then renamed into place,
// so a failed or interrupted backup never leaves a half file under the name asked for.
// MariaDB/MySQL have their own consistent dump: the error names the exact command.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import type { Database as SqliteConnection } from 'sqlite3';
import { ServiceError } from '../errors.js';
import { privateFile } from '../private-files.js';
import type { ParsedUrl } from './url.js';

const require = createRequire(import.meta.url);

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  seconds: number;
  integrity: 'ok';
}

export interface BackupOptions {
  /** Replace an existing file at the target. */
  force?: boolean;
  /** How long a step waits on a busy database before trying again (the backup never gives up on busy). */
  busyTimeoutMs?: number;
}

/** Copies the SQLite database at `parsed.storage` to `target`. */
export async function backupDatabase(parsed: ParsedUrl, target: string, options: BackupOptions = {}): Promise<BackupResult> {
  if (parsed.dialect !== 'sqlite') throw dumpInstead(parsed, target);
  const source = parsed.storage!;
  if (source === ':memory:') throw new ServiceError('svc_backup_failed', 'An in-memory database has nothing on disk to back up.', 400);
  const file = resolve(target);
  refuseLiveFile(source, file);
  if (existsSync(file) && !options.force)
    throw new ServiceError('svc_backup_exists', `${file} exists: choose another name, or pass --force to replace it.`, 409, { file });
  if (!existsSync(dirname(file))) throw new ServiceError('svc_backup_failed', `The folder ${dirname(file)} does not exist.`, 400, { file });
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.partial`);
  const started = performance.now();
  try {
    // Created owner-only first: the backup holds everything the database holds.
    privateFile(temp);
    const pages = await copy(source, temp, options.busyTimeoutMs ?? 5_000);
    await verify(temp);
    renameSync(temp, file);
    return { file, bytes: statSync(file).size, pages, seconds: (performance.now() - started) / 1000, integrity: 'ok' };
  } catch (err) {
    rmSync(temp, { force: true });
    for (const companion of ['-wal', '-shm', '-journal']) rmSync(temp + companion, { force: true });
    if (err instanceof ServiceError) throw err;
    throw new ServiceError('svc_backup_failed', `The backup failed: ${(err as Error).message}`, 500, { file });
  }
}

/** The files SQLite keeps for a database: the database, its write-ahead log, its shared memory, its rollback journal. */
const LIVE_SUFFIXES = ['', '-wal', '-shm', '-journal'];

/**
 * Refuses a target that is the live database or one of its companion files, under any name: the
 * same file (device and inode, so a hard link, a symlink, a symlinked folder or another spelling of
 * the path is caught), or, for a file that does not exist now (a -wal after a checkpoint), the same
 * place once links are resolved. Renaming the copy over the -wal made new connections read a
 * database as their log (SQLITE_NOTADB) and lost committed rows after a crash.
 */
function refuseLiveFile(source: string, file: string): void {
  const target = statSync(file, { throwIfNoEntry: false });
  const targetPlace = place(file);
  for (const suffix of LIVE_SUFFIXES) {
    const live = resolve(source + suffix);
    const stat = statSync(live, { throwIfNoEntry: false });
    const same = (target && stat && target.dev === stat.dev && target.ino === stat.ino) || (targetPlace !== null && targetPlace === place(live));
    if (same)
      throw new ServiceError(
        'svc_backup_target_is_database',
        `${file} is ${suffix ? `the database's ${suffix.slice(1)} file` : 'the database itself'} (or a link to it): writing the backup there would corrupt the live database. Choose a file outside it.`,
        400,
        { file, database_file: live },
      );
  }
}

/**
 * Where a path leads once every link is resolved: the file's own place, else (nothing there yet)
 * where a dangling link points, else its folder's place plus its name.
 */
function place(path: string, hops = 0): string | null {
  try {
    return realpathSync(path);
  } catch {
    // A link to a file not there now (the -journal between transactions) leads where it points.
    if (hops < 40 && lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return place(resolve(dirname(path), readlinkSync(path)), hops + 1);
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return null;
    }
  }
}

function open(file: string, mode: number): Promise<SqliteConnection> {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  return new Promise((resolveOpen, reject) => {
    const conn: SqliteConnection = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolveOpen(conn)));
  });
}

function close(conn: SqliteConnection): Promise<void> {
  return new Promise((done) => conn.close(() => done()));
}

/** The untyped part of sqlite3's Backup object (sqlite3's own typings leave it out). */
interface SqliteBackup {
  step(pages: number, callback: (err: Error | null) => void): void;
  finish(callback: (err: Error | null) => void): void;
  completed: boolean;
  failed: boolean;
  pageCount: number;
}

/** Copies every page in one step at a time; a busy or locked source is waited for and tried again. */
async function copy(source: string, temp: string, busyTimeoutMs: number): Promise<number> {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  if (!existsSync(source)) throw new ServiceError('svc_backup_failed', `The database file ${source} does not exist.`, 400);
  const conn = await open(source, sqlite3.OPEN_READONLY);
  try {
    conn.configure('busyTimeout', busyTimeoutMs);
    const backup = (conn as unknown as { backup(file: string): SqliteBackup }).backup(temp);
    const step = () => new Promise<void>((done, reject) => backup.step(-1, (err) => (err ? reject(err) : done())));
    for (let attempt = 0; !backup.completed; attempt++) {
      await step();
      if (backup.failed) throw new Error('SQLite reported the backup failed');
      // SQLITE_BUSY/LOCKED leave it neither completed nor failed: wait and step again.
      if (!backup.completed) await new Promise((r) => setTimeout(r, Math.min(1000, 10 * 2 ** Math.min(attempt, 7))));
    }
    await new Promise<void>((done) => backup.finish(() => done()));
    return backup.pageCount;
  } finally {
    await close(conn);
  }
}

/**
 * The copy carries the source's WAL mode in its header; it is switched to a rollback journal so the
 * backup is one self-contained file (the daemon turns WAL on again when it opens a restored copy),
 * then checked page by page.
 */
async function verify(file: string): Promise<void> {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  const conn = await open(file, sqlite3.OPEN_READWRITE);
  try {
    await new Promise<void>((done, reject) => conn.run('PRAGMA journal_mode = DELETE', (err) => (err ? reject(err) : done())));
    const rows = await new Promise<Array<{ integrity_check: string }>>((done, reject) =>
      conn.all('PRAGMA integrity_check', (err, r) => (err ? reject(err) : done(r as Array<{ integrity_check: string }>))),
    );
    if (rows.length !== 1 || rows[0].integrity_check !== 'ok')
      throw new ServiceError(
        'svc_backup_failed',
        `The copy failed its integrity check: ${rows
          .map((r) => r.integrity_check)
          .join('; ')
          .slice(0, 200)}`,
        500,
      );
  } finally {
    await close(conn);
  }
}

/** The mariadb-dump command for the configured server (the password is asked for, never printed). */
export function dumpCommand(parsed: ParsedUrl, target: string): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const where = parsed.socketPath ? [`--socket=${quote(parsed.socketPath)}`] : [`--host=${quote(parsed.host ?? '127.0.0.1')}`, `--port=${parsed.port ?? 3306}`];
  const user = parsed.username ? [`--user=${quote(parsed.username)}`] : [];
  const password = parsed.password ? ['--password'] : [];
  return [
    'mariadb-dump',
    '--single-transaction',
    '--quick',
    '--routines',
    '--triggers',
    '--hex-blob',
    ...where,
    ...user,
    ...password,
    quote(parsed.database ?? ''),
    '>',
    quote(target),
  ].join(' ');
}

function dumpInstead(parsed: ParsedUrl, target: string): ServiceError {
  const command = dumpCommand(parsed, target);
  return new ServiceError(
    'svc_backup_use_dump',
    `On MariaDB/MySQL the server makes the consistent copy: run\n  ${command}\n(--single-transaction reads one snapshot without locking the tables; mysqldump takes the same options).`,
    400,
    { command },
  );
}
