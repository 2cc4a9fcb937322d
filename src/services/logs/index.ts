// The plugin log: leveled entries in the `logs` table and as JSON lines on stdout. Writes are
// batched (one multi-row INSERT per tick) so logging never adds a round trip to a request.
import type { Clock } from '../../clock.js';
import { Database } from '../../db/database.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import { countByStatus, ListWhere, orderClause, pageClause, type OneOrMany, type StatusCounts } from '../../db/lists.js';
import { toInt, toIso } from '../../db/values.js';
import type { SecretValues } from '../../secret-values.js';
import { dict } from '../../objects.js';
import { terminalJson } from '../../terminal-text.js';

export const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogRecord {
  id: number;
  time: string;
  level: LogLevel;
  source: string;
  message: string;
  context: Record<string, unknown> | null;
  request_id: string | null;
}

/** The fields the log sorts by, and the column each is (`time` is the entry's created_at). */
export const LOG_ORDERBY = { id: 'id', time: 'created_at' } as const;
export type LogOrderby = keyof typeof LOG_ORDERBY;

/** The filters of the log and of its counts per level. */
export interface LogWhere {
  level?: OneOrMany<LogLevel>;
  level_exclude?: OneOrMany<LogLevel>;
  /** This level and above (`warning`: warnings and errors). */
  min_level?: LogLevel;
  source?: OneOrMany<string>;
  search?: string;
  after?: Date;
  before?: Date;
  /** Entries with a larger id (a reader following the log asks for what came after its last). */
  after_id?: number;
}

export interface LogFilters extends LogWhere {
  /** Default id. */
  orderby?: LogOrderby;
  /** Newest first (default) or oldest first. */
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /logs/counts`: the log's, without paging, sort and the level ones. */
export type LogCountFilters = Omit<LogWhere, 'level' | 'level_exclude' | 'min_level'>;

function logWhere(filters: LogWhere): ListWhere {
  const w = new ListWhere()
    .anyOf('level', filters.level)
    .noneOf('level', filters.level_exclude)
    .anyOf('source', filters.source)
    .after('created_at', filters.after)
    .before('created_at', filters.before);
  if (filters.min_level && filters.min_level !== 'debug') w.anyOf('level', LOG_LEVELS.slice(LOG_LEVELS.indexOf(filters.min_level)));
  if (filters.search) w.add("message LIKE ? ESCAPE '!'", Database.likeContains(filters.search));
  if (filters.after_id !== undefined) w.add('id > ?', filters.after_id);
  return w;
}

export interface LogServiceDeps {
  db: Database;
  clock: Clock;
  /** `info` drops debug entries; `debug` keeps them. */
  level: 'debug' | 'info';
  retentionDays: number;
  /** Where JSON lines go; null to write none (CLI commands, tests). */
  stdout: NodeJS.WritableStream | null;
  /** Secret values scrubbed from every message and context before they are stored or printed. */
  secrets?: SecretValues;
}

/** One entry to store, as `appendMany` takes it. */
export interface NewLogEntry {
  created_at: Date;
  level: LogLevel;
  source: string;
  message: string;
  context: string | null;
  request_id: string | null;
}

const SECRET_KEY = /pass(word)?|secret|token|authorization|cookie|nonce|api[_-]?key|signature|hash/i;
const MAX_BUFFER = 10_000;
const MAX_CONTEXT_CHARS = 16_384;

/** Copies `value` with every secret-looking key replaced by "[redacted]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[…]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redact(v, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (value && typeof value === 'object') {
    // The keys may be a client's (a postback body): copied onto an object without a prototype, so
    // a "__proto__" key stays a key instead of replacing the copy's prototype.
    const out = dict();
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
    return out;
  }
  return value;
}

/** Writes and reads the plugin log. */
export class LogService {
  private readonly deps: LogServiceDeps;
  private buffer: NewLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private dropped = 0;

  constructor(deps: LogServiceDeps) {
    this.deps = deps;
  }

  debug(source: string, message: string, context?: Record<string, unknown>, requestId?: string): void {
    this.write('debug', source, message, context, requestId);
  }
  info(source: string, message: string, context?: Record<string, unknown>, requestId?: string): void {
    this.write('info', source, message, context, requestId);
  }
  warning(source: string, message: string, context?: Record<string, unknown>, requestId?: string): void {
    this.write('warning', source, message, context, requestId);
  }
  error(source: string, message: string, context?: Record<string, unknown>, requestId?: string): void {
    this.write('error', source, message, context, requestId);
  }

  write(level: LogLevel, source: string, message: string, context?: Record<string, unknown>, requestId?: string): void {
    if (level === 'debug' && this.deps.level !== 'debug') return;
    const created_at = this.deps.clock.now();
    // Secret-looking keys by name, then every known secret value wherever it sits (a URL's path,
    // an innocently named parameter, an upstream's echo in an error message).
    const secrets = this.deps.secrets;
    if (secrets) message = secrets.scrub(message);
    const safe = context ? ((secrets ? secrets.scrubDeep(redact(context)) : redact(context)) as Record<string, unknown>) : null;
    let json = safe ? JSON.stringify(safe) : null;
    if (json && json.length > MAX_CONTEXT_CHARS) json = JSON.stringify({ truncated: true, preview: json.slice(0, 1000) });
    const entry: NewLogEntry = { created_at, level, source: source.slice(0, 64), message, context: json, request_id: requestId ?? null };
    // Escaped throughout (terminalJson): these lines land on the daemon's terminal.
    this.deps.stdout?.write(
      `${terminalJson({ time: created_at.toISOString(), level, source: entry.source, message, context: safe ?? undefined, request_id: requestId })}\n`,
    );
    if (this.buffer.length >= MAX_BUFFER) {
      this.buffer.shift();
      this.dropped++;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= 200) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), 100);
      this.timer.unref();
    }
  }

  /** Writes everything buffered. Entries stay buffered (bounded) while the database is down. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.flushing !== null) await this.flushing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, 500);
    this.flushing = this.insert(batch)
      .catch((err) => {
        this.buffer.unshift(...batch.slice(0, Math.max(0, MAX_BUFFER - this.buffer.length)));
        const error = String((err as Error).message);
        this.deps.stdout?.write(
          `${terminalJson({ level: 'error', source: 'logs', message: 'Could not store log entries', error: this.deps.secrets?.scrub(error) ?? error })}\n`,
        );
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
    if (this.buffer.length > 0 && !this.timer) {
      this.timer = setTimeout(() => void this.flush(), 1000);
      this.timer.unref();
    }
  }

  private async insert(batch: NewLogEntry[]): Promise<void> {
    if (this.dropped > 0) {
      const n = this.dropped;
      this.dropped = 0;
      batch.push({
        created_at: this.deps.clock.now(),
        level: 'warning',
        source: 'logs',
        message: `${n} log entries were dropped while the database was unavailable`,
        context: null,
        request_id: null,
      });
    }
    await this.appendMany(batch);
  }

  /** Stores entries as they are (already redacted), keeping the running total exact. */
  async appendMany(entries: NewLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map(() => '(?, ?, ?, ?, ?, ?)').join(', ');
    const values = entries.flatMap((e) => [e.created_at, e.level, e.source, e.message, e.context, e.request_id]);
    await this.deps.db.transaction(async (t) => {
      await this.deps.db.execute(`INSERT INTO logs (created_at, level, source, message, context, request_id) VALUES ${rows}`, values, t);
      await this.deps.db.execute("UPDATE counters SET value = value + ? WHERE name = 'logs'", [entries.length], t);
    });
  }

  /** Newest first (or oldest first), filtered and paged. */
  async list(filters: LogFilters): Promise<{ items: LogRecord[]; total: number }> {
    const where = logWhere(filters);
    const { sql: clause, params } = where;
    const filtered = where.conditions.length > 0;
    // Unfiltered, the total is the running counter: counting a large log on every page would not scale.
    const countSql = filtered ? `SELECT COUNT(*) AS n FROM logs ${clause}` : "SELECT value AS n FROM counters WHERE name = 'logs'";
    const countParams = filtered ? params : [];
    const order = orderClause(LOG_ORDERBY, filters, 'id', { orderby: 'id', order: 'desc' });
    // One round trip: the total rides along with the page (a page past the end asks again).
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, created_at, level, source, message, context, request_id, (${countSql}) AS total_count FROM logs ${clause} ${order} ${pageClause(filters)}`,
      [...countParams, ...params],
    );
    const count = rows.length ? [{ n: rows[0].total_count }] : await this.deps.db.select<{ n: unknown }>(countSql, countParams);
    return { items: rows.map(toRecord), total: toInt(count[0].n) };
  }

  /** The views row of the log: entries per level (every level, 0 included) under its other filters. */
  counts(filters: LogCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'logs', 'level', logWhere(filters), LOG_LEVELS);
  }

  /** The sources present in the log, alphabetically (at most 200: the picker's list). */
  async sources(): Promise<string[]> {
    const rows = await this.deps.db.select<{ source: unknown }>('SELECT DISTINCT source FROM logs ORDER BY source LIMIT 200');
    return rows.map((r) => String(r.source));
  }

  /** Deletes entries older than the retention; returns how many. */
  async prune(retentionDays = this.deps.retentionDays): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - retentionDays * 86_400_000);
    let total = 0;
    // Bounded batches keep each delete's lock short on a large table.
    for (;;) {
      const victims = await this.deps.db.select<{ id: unknown }>('SELECT id FROM logs WHERE created_at < ? ORDER BY id LIMIT 5000', [cutoff]);
      if (victims.length === 0) return total;
      const ids = victims.map((v) => toInt(v.id));
      total += await this.deps.db.transaction(async (t) => {
        const { affected } = await this.deps.db.execute(`DELETE FROM logs WHERE id IN (${ids.map(() => '?').join(',')})`, ids, t);
        await this.deps.db.execute("UPDATE counters SET value = value - ? WHERE name = 'logs'", [affected], t);
        return affected;
      });
    }
  }

  /**
   * At a member's erasure, in `t`: the person's words (login, e-mail, name) replaced in every log
   * line's message and context. The log is not keyed by member, so the whole (retained) log is
   * searched; the caller flushes the buffer first so no line escapes. Answers how many changed.
   */
  eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return replaceInColumns(this.deps.db, t, { table: 'logs', key: 'id', columns: ['message', 'context'] }, replacements);
  }

  async close(): Promise<void> {
    await this.flush();
  }
}

function toRecord(row: Record<string, unknown>): LogRecord {
  let context: Record<string, unknown> | null = null;
  if (typeof row.context === 'string') {
    try {
      context = JSON.parse(row.context) as Record<string, unknown>;
    } catch {
      context = { raw: row.context };
    }
  }
  return {
    id: toInt(row.id),
    time: toIso(row.created_at)!,
    level: row.level as LogLevel,
    source: String(row.source),
    message: String(row.message),
    context,
    request_id: (row.request_id as string | null) ?? null,
  };
}
