// The AI token budgets. Every provider call reserves an estimate of what it will spend before it
// starts and settles the reservation with what it really spent once it ends, so calls running at
// once cannot all pass a check that only sees the tokens already spent. The daily budget
// (`ai.daily_token_budget`, per UTC day, across bulk runs and single-item routes) lives in the
// database, the one truth several daemons share: a reservation is a row written under the day
// row's lock (SQLite: the write transaction's lock). A bulk run's own budget (`ai.token_budget`)
// is held in the run (bulk.ts) with the same estimates.
//
// The estimate: the prompt's UTF-8 bytes / 4 (about four bytes a token in English text; the JSON
// Schema asked for counts as prompt) plus 8 a message, plus `ai.answer_token_estimate` for the
// answer (the provider is not asked to cap its answer: not every OpenAI-compatible server takes the
// same parameter for it). A call counts what the provider reported; one that got an answer but no
// reported usage counts its estimate; one that got no answer (an HTTP error, no connection, a
// timeout, a cancel) counts what it reported, usually nothing.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { type ChatMessage, ProviderCallError, type StructuredAnswer } from './provider.js';
import type { AiSettings } from './settings.js';

/** A call's reservation on the daily budget. */
export interface Reservation {
  id: number;
  day: string;
  tokens: number;
}

/** Today's spend, as the settings show it. */
export interface AiBudgetDay {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Tokens counted today (reported, or estimated for answers without usage). */
  spent: number;
  /** Tokens reserved by the calls in flight. */
  reserved: number;
  /** What is left of `ai.daily_token_budget` (null: no daily limit). */
  remaining: number | null;
  resets_at: string;
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10);
const nextMidnight = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));

/** Tokens a call is reserved at before it starts (see the header). */
export function estimateTokens(messages: ChatMessage[], jsonSchema: Record<string, unknown>, answerTokens: number): number {
  let bytes = Buffer.byteLength(JSON.stringify(jsonSchema));
  for (const m of messages) bytes += Buffer.byteLength(m.content);
  return Math.ceil(bytes / 4) + 8 * messages.length + answerTokens;
}

/** What a call's outcome (its answer, or what it threw) counts against the budgets. */
export function countedTokens(outcome: StructuredAnswer<unknown> | unknown, estimate: number): number {
  if (outcome instanceof ProviderCallError) {
    if (outcome.trace.usage.total_tokens > 0) return outcome.trace.usage.total_tokens;
    // Refused content and an unreadable body were answers: the provider may well bill them.
    const answered = outcome.error.code === 'svc_ai_bad_output' || outcome.error.data.reason === 'bad_response';
    return answered ? estimate : 0;
  }
  if (outcome && typeof outcome === 'object' && 'usage' in outcome && 'value' in outcome) {
    const total = (outcome as StructuredAnswer<unknown>).usage.total_tokens;
    return total > 0 ? total : estimate;
  }
  return 0;
}

/** How long a reservation holds: a call's every attempt, its waits between them, and a minute. */
export function holdMs(s: Pick<AiSettings, 'timeout_ms' | 'max_attempts' | 'retry_after_max_seconds' | 'retry_max_ms'>): number {
  return s.max_attempts * (s.timeout_ms + Math.max(s.retry_after_max_seconds * 1000, s.retry_max_ms)) + 60_000;
}

/** The daily token budget's reservations and spend (tables `ai_token_days`, `ai_token_reservations`). */
export class AiBudget {
  /** The last day whose row this process knows exists. */
  private dayMade: string | null = null;

  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /**
   * Reserves `tokens` on today's budget, or 429 svc_ai_budget_exhausted when `limit` (0: none)
   * cannot take them beside what was spent and what the calls in flight hold.
   */
  async reserve(tokens: number, limit: number, hold: number, jobId: number | null): Promise<Reservation> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const day = utcDay(now);
    // Made outside the transaction: an INSERT IGNORE's shared lock, then FOR UPDATE, would deadlock two reservers.
    if (this.dayMade !== day) {
      await db.execute(db.insertIgnore('ai_token_days', ['day', 'spent', 'updated_at']), [day, 0, now]);
      this.dayMade = day;
    }
    // Without a daily limit there is nothing to hold: the call only counts when it settles (no write before it).
    if (limit <= 0) return { id: 0, day, tokens };
    return db.transaction(async (t) => {
      const [row] = await db.select<{ spent: unknown }>(`SELECT spent FROM ai_token_days WHERE day = ?${db.forUpdate()}`, [day], t);
      // Reservations of a process that died with calls in flight end at their expiry.
      await db.execute('DELETE FROM ai_token_reservations WHERE expires_at <= ?', [now], t);
      const [held] = await db.select<{ n: unknown }>('SELECT SUM(tokens) AS n FROM ai_token_reservations WHERE day = ?', [day], t);
      const spent = toInt(row.spent);
      const reserved = toInt(held?.n ?? 0);
      if (limit > 0 && spent + reserved + tokens > limit) throw exhausted(limit, spent, reserved, tokens, now);
      const { insertId } = await db.execute(
        'INSERT INTO ai_token_reservations (day, tokens, job_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)',
        [day, tokens, jobId, new Date(now.getTime() + hold), now],
        t,
      );
      return { id: insertId!, day, tokens };
    });
  }

  /** Ends a reservation: the day it was made on counts `counted` tokens instead of the estimate. */
  async settle(r: Reservation, counted: number): Promise<void> {
    const { db, clock } = this.deps;
    await db.transaction(async (t) => {
      if (r.id) await db.execute('DELETE FROM ai_token_reservations WHERE id = ?', [r.id], t);
      await db.execute('UPDATE ai_token_days SET spent = spent + ?, updated_at = ? WHERE day = ?', [Math.max(0, Math.floor(counted)), clock.now(), r.day], t);
    });
  }

  /** Refuses (429) when today's budget has nothing left at all: a bulk run would start only to stop. */
  async assertLeft(limit: number): Promise<void> {
    if (limit <= 0) return;
    const today = await this.today(limit);
    if (today.remaining === 0) throw exhausted(limit, today.spent, today.reserved, 0, this.deps.clock.now());
  }

  /** Today's spend and what is left of `limit`. */
  async today(limit: number): Promise<AiBudgetDay> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const day = utcDay(now);
    const [[row], [held]] = await Promise.all([
      db.select<{ spent: unknown }>('SELECT spent FROM ai_token_days WHERE day = ?', [day]),
      db.select<{ n: unknown }>('SELECT SUM(tokens) AS n FROM ai_token_reservations WHERE day = ? AND expires_at > ?', [day, now]),
    ]);
    const spent = row ? toInt(row.spent) : 0;
    const reserved = toInt(held?.n ?? 0);
    return {
      day,
      spent,
      reserved,
      remaining: limit > 0 ? Math.max(0, limit - spent - reserved) : null,
      resets_at: nextMidnight(now).toISOString(),
    };
  }
}

function exhausted(limit: number, spent: number, reserved: number, needed: number, now: Date): ServiceError {
  const resets = nextMidnight(now);
  const wait = needed > 0 ? `; this call needs an estimated ${needed}` : '';
  return new ServiceError(
    'svc_ai_budget_exhausted',
    `The AI daily token budget is spent: ${spent} of ${limit} tokens counted today (UTC), ${reserved} reserved by calls in flight${wait}. It resets at ${resets.toISOString()}; raise ai.daily_token_budget (\`cashtrack ai configure --set daily_token_budget=...\`) to go on today.`,
    429,
    { budget: 'daily', limit, spent, reserved, needed, resets_at: resets.toISOString() },
    { 'Retry-After': String(Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000))) },
  );
}
