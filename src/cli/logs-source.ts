// What both forms of `cashtrack logs` share, the plain or followed lines (commands/logs.ts) and
// the terminal view (logs-view.tsx): the source entries are read from, the page they are read
// in, and an entry as one line of text.
import type { LogFilters, LogRecord } from '../services/logs/index.js';
import { importModule } from '../import-module.js';
import { terminalJson, terminalLine } from '../terminal-text.js';
import type { runLogsView } from './logs-view.js';

/**
 * The terminal view, logs-view.tsx, loaded as the ES module it is (it imports Ink: see
 * src/import-module.ts), from this file's directory: dist/src/cli/, or the CLI bundle's beside it.
 */
export function loadLogsView(): Promise<{ runLogsView: typeof runLogsView }> {
  return importModule(new URL('../cli/logs-view.js', import.meta.url));
}

/** What the view reads from; `LogService` is one. */
export interface LogSource {
  list(filters: LogFilters): Promise<{ items: LogRecord[]; total: number }>;
  /** The sources present in the log, for the picker. */
  sources?(): Promise<string[]>;
}

export const PER_PAGE = 100; // the service's largest page

/**
 * One entry as one line of plain text: a message or source from a request or a feed can neither
 * drive the terminal nor start a line that looks like another entry. Each field is cleaned on its
 * own, so a sequence opened in one cannot swallow the next.
 */
export function formatLine(e: LogRecord): string {
  const ctx = e.context && Object.keys(e.context).length ? ` ${terminalJson(e.context)}` : '';
  return `${e.time} ${e.level.toUpperCase().padEnd(7)} [${terminalLine(e.source)}] ${terminalLine(e.message)}${ctx}`;
}
