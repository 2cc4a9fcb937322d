// `cashtrack logs` (the interactive view on a terminal; plain or JSON lines otherwise, once or
// followed) and `logs prune`.
import type { Command } from 'commander';
import { LOG_LEVELS, type LogLevel, type LogRecord } from '../../services/logs/index.js';
import { terminalJson } from '../../terminal-text.js';
import { printJson, UsageError, withContext, type Io } from '../io.js';
import { formatLine, loadLogsView, PER_PAGE, type LogSource } from '../logs-source.js';
import type { ViewFilters } from '../logs-store.js';
import { json, positiveInt, type Run } from '../options.js';

export function register(logs: Command, run: Run): void {
  logs.enablePositionalOptions();
  logs
    .option('--level <level>', 'this level and above (debug, info, warning, error)')
    .option('--source <source>', 'only this source')
    .option('--search <text>', 'message contains')
    .option('--since <when>', 'entries after: 30m, 1h, 2d, 1w ago, or an ISO 8601 time')
    .option('--until <when>', 'entries before: a duration ago or an ISO 8601 time')
    .option('-f, --follow', 'when not on a terminal: keep printing new entries until interrupted')
    .option('--limit <n>', 'entries to print when not interactive (with --follow: to start with)', positiveInt, 50)
    .addOption(json())
    .action(run(view));
  logs
    .command('prune')
    .description('delete entries older than the retention')
    .option('--days <n>', 'retention in days (default: log.retention_days)', positiveInt)
    .addOption(json())
    .action(run(prune));
}

export interface ViewOptions {
  level?: string;
  source?: string;
  search?: string;
  since?: string;
  until?: string;
  follow?: boolean;
  limit: number;
  json?: boolean;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30m`, `1h`, `2d`, `1w` before `now`, or an ISO 8601 date or time. */
export function parseTime(value: string, now: Date, option: string): Date {
  const ago = /^(\d{1,6})([smhdw])$/.exec(value.trim());
  if (ago) return new Date(now.getTime() - Number(ago[1]) * UNIT_MS[ago[2]]);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    const d = new Date(value.trim());
    if (!Number.isNaN(d.getTime())) return d;
  }
  throw new UsageError(`${option} must be a duration such as 30m, 1h, 2d or 1w, or an ISO 8601 time such as 2026-11-24T10:00:00Z`);
}

function filtersFrom(opts: ViewOptions, now: Date): ViewFilters {
  if (opts.level && !LOG_LEVELS.includes(opts.level as LogLevel)) throw new UsageError(`--level must be one of ${LOG_LEVELS.join(', ')}`);
  const after = opts.since ? parseTime(opts.since, now, '--since') : undefined;
  const before = opts.until ? parseTime(opts.until, now, '--until') : undefined;
  if (after && before && after >= before) throw new UsageError('--since must be earlier than --until');
  return { min_level: opts.level as LogLevel | undefined, source: opts.source, search: opts.search, after, before };
}

export async function view(io: Io, opts: ViewOptions): Promise<void> {
  const filters = filtersFrom(opts, new Date());
  if (io.stdout.isTTY && io.stdin.isTTY && !opts.json) {
    const { runLogsView } = await loadLogsView();
    return withContext(io, (ctx) => runLogsView(ctx, filters));
  }
  await withContext(io, async (ctx) => {
    if (opts.follow) return followUntilStopped(io, ctx.logger, filters, opts);
    const { items } = await ctx.logger.list({ ...filters, page: 1, per_page: Math.min(opts.limit, 1000) });
    if (opts.json) return printJson(io, items);
    for (const e of items.reverse()) io.stdout.write(`${formatLine(e)}\n`);
  });
}

/** `--follow` over a pipe: until SIGINT or SIGTERM, or until the reader goes away. */
async function followUntilStopped(io: Io, source: LogSource, filters: ViewFilters, opts: ViewOptions): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // EPIPE: whoever read the pipe (`| head`) has gone.
  io.stdout.once('error', onSignal);
  try {
    await followLogs(source, filters, (e) => io.stdout.write(`${opts.json ? terminalJson(e) : formatLine(e)}\n`), {
      signal: stop.signal,
      initial: opts.limit,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.stdout.off('error', onSignal);
  }
}

/**
 * Writes the newest `initial` entries, oldest first, then every newer entry once, in order, polling
 * until `signal` aborts. A burst is read a page at a time after the last id written: nothing is
 * skipped, and no more than a page is held.
 */
export async function followLogs(
  source: LogSource,
  filters: ViewFilters,
  write: (e: LogRecord) => void,
  options: { signal: AbortSignal; initial: number; pollMs?: number },
): Promise<void> {
  const { signal } = options;
  const first = await source.list({ ...filters, page: 1, per_page: Math.min(Math.max(options.initial, 1), PER_PAGE) });
  for (const e of first.items.slice(0, options.initial).reverse()) write(e);
  let lastId = first.items[0]?.id ?? 0;
  while (!signal.aborted) {
    for (;;) {
      const { items } = await source.list({ ...filters, after_id: lastId, order: 'asc', page: 1, per_page: PER_PAGE });
      for (const e of items) write(e);
      if (items.length) lastId = items[items.length - 1].id;
      if (items.length < PER_PAGE || signal.aborted) break;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.pollMs ?? 1000);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

export async function prune(io: Io, opts: { days?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const days = opts.days ?? ctx.config.log.retention_days;
    const deleted = await ctx.logger.prune(days);
    ctx.logger.info('logs', 'Log pruned', { deleted, retention_days: days });
    if (opts.json) return printJson(io, { deleted, retention_days: days });
    io.stdout.write(`deleted ${deleted} entr${deleted === 1 ? 'y' : 'ies'} older than ${days} day(s)\n`);
  });
}
