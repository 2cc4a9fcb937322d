// What both forms of `cashtrack logs` share, the plain or followed lines (commands/logs.ts) and
// the terminal view (logs-view.tsx): the source entries are read from, the page they are read
// in, and an entry as one line of text.
import type { LogFilters, LogRecord } from '../services/logs/index.js';

/** What the view reads from; `LogService` is one. */
export interface LogSource {
  list(filters: LogFilters): Promise<{ items: LogRecord[]; total: number }>;
  /** The sources present in the log, for the picker. */
  sources?(): Promise<string[]>;
}

export const PER_PAGE = 100; // the service's largest page

export function formatLine(e: LogRecord): string {
  const ctx = e.context && Object.keys(e.context).length ? ` ${JSON.stringify(e.context)}` : '';
  return `${e.time} ${e.level.toUpperCase().padEnd(7)} [${e.source}] ${e.message}${ctx}`;
}
