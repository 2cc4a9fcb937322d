// How many daemon processes `cashtrack serve` runs (`server.workers`, `CASHTRACK_WORKERS`,
// `--workers`): one reading of the value, so the configuration and the command line accept and
// refuse the same things.
import { availableParallelism } from 'node:os';

/** More processes than this only multiply database connections and memory on any machine we run on. */
export const MAX_WORKERS = 64;

/** What a worker count may be, as the error messages say it. */
export const WORKERS_RULE = `auto or a whole number from 1 to ${MAX_WORKERS}`;

/** `value` (a number, or its text as an environment variable or option gives it) as a worker setting; null when it is none. */
export function workersSetting(value: unknown): number | 'auto' | null {
  if (value === 'auto') return 'auto';
  const n = typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_WORKERS ? n : null;
}

/** The number of processes a setting means: `auto` is one per CPU the process may use. */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : setting;
}
