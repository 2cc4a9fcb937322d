// The SQLite side of the database handle: sqlite3 with every connection configured as it opens
// (busy timeout, WAL, durable commits, foreign keys), and the database file kept owner-only.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { privateFile, tighten } from '../private-files.js';

const require = createRequire(import.meta.url);

/**
 * sqlite3 with every connection configured on open: the direct driver's readers and writer and
 * Sequelize's migration connection all get the per-connection settings (busy timeout, synchronous).
 */
export function configuredSqlite3(busyTimeoutMs: number): typeof import('sqlite3') {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  class ConfiguredDatabase extends sqlite3.Database {
    constructor(filename: string, mode?: number, callback?: (err: Error | null) => void) {
      const done = callback ?? (() => {});
      super(filename, mode ?? sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => {
        if (err) return done(err);
        this.configure('busyTimeout', busyTimeoutMs);
        // WAL lets readers run beside the writer; synchronous=FULL makes each commit durable.
        // Switching a fresh file to WAL needs it to itself, and SQLite answers SQLITE_BUSY at once
        // (without its busy handler) when another process opens it at the same moment: the
        // switch is tried again until the busy timeout runs out.
        const deadline = Date.now() + busyTimeoutMs;
        const configure = () =>
          this.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;', (e) => {
            if (e && (e as { code?: string }).code === 'SQLITE_BUSY' && Date.now() < deadline) setTimeout(configure, 10 + Math.random() * 40);
            else done(e);
          });
        configure();
      });
    }
  }
  return { ...sqlite3, Database: ConfiguredDatabase as unknown as typeof sqlite3.Database };
}

/**
 * Before the first connection to a SQLite file: its directory is created owner-only, the file
 * is created (or tightened to) 0600, and so are its -wal and -shm files when they exist (SQLite
 * gives new ones the database file's permissions).
 */
export function prepareSqliteStorage(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  privateFile(file);
  for (const companion of [`${file}-wal`, `${file}-shm`, `${file}-journal`]) tighten(companion);
}
