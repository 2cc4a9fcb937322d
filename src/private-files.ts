// The data directory, the generated secret and the SQLite database (with its -wal and -shm files)
// hold every member's balance, the sessions and the key that seals network credentials: nobody
// but the daemon's own user may read them. Created owner-only, and tightened on start when an
// older release (or a umask) left them readable by others.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Takes the group and other bits off `path` when it exists and belongs to this process's user
 * (a directory or file someone else owns is left alone: it is not ours to change).
 */
export function tighten(path: string): void {
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = statSync(path));
  } catch {
    return;
  }
  if (typeof process.getuid === 'function' && uid !== process.getuid()) return;
  if (mode & 0o077) chmodSync(path, mode & 0o700);
}

/** Creates `dir` (and missing parents) owner-only; an existing `dir` of ours is tightened. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  tighten(dir);
}

/**
 * Creates `file` empty and owner-only when absent (so whatever opens it next, SQLite included,
 * finds those permissions and gives them to its companion files), and tightens it when present.
 */
export function privateFile(file: string): void {
  closeSync(openSync(file, 'a', FILE_MODE));
  tighten(file);
}
