// `cashtrack logs` (interactive view on a terminal, plain lines otherwise) and `logs prune`.
import { LOG_LEVELS, type LogLevel, type LogRecord } from '../../services/logs.js';
import { printJson, UsageError, withContext, type Io } from '../io.js';

export interface ViewOptions {
  level?: string;
  source?: string;
  search?: string;
  limit: number;
  json?: boolean;
}

export function formatLine(e: LogRecord): string {
  const ctx = e.context && Object.keys(e.context).length ? ' ' + JSON.stringify(e.context) : '';
  return `${e.time} ${e.level.toUpperCase().padEnd(7)} [${e.source}] ${e.message}${ctx}`;
}

export async function view(io: Io, opts: ViewOptions): Promise<void> {
  if (opts.level && !LOG_LEVELS.includes(opts.level as LogLevel)) throw new UsageError(`--level must be one of ${LOG_LEVELS.join(', ')}`);
  const filters = { level: opts.level as LogLevel | undefined, source: opts.source, search: opts.search };
  if (io.stdout.isTTY && io.stdin.isTTY && !opts.json) {
    const { runLogsView } = await import('../logs-view.js');
    return withContext(io, (ctx) => runLogsView(ctx, filters));
  }
  await withContext(io, async (ctx) => {
    const { items } = await ctx.logger.list({ ...filters, page: 1, per_page: Math.min(opts.limit, 1000) });
    if (opts.json) return printJson(io, items);
    for (const e of items.reverse()) io.stdout.write(formatLine(e) + '\n');
  });
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
