// The `ai_calls` table: one row per generation with the model and the tokens it spent, so an
// administrator sees what an item, a bulk run and the site's AI use cost. Written by AiService only
// (through AiCalls); what other domains show of it is the read model in usage.ts.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt } from '../../db/values.js';
import type { Usage } from './provider.js';

export type AiKind = 'shop' | 'coupon';
export type AiOutcome = 'saved' | 'dry_run' | 'failed';

export interface AiCallRecord {
  kind: AiKind;
  item_id: number;
  model: string;
  usage: Usage;
  job_id: number | null;
  outcome: AiOutcome;
  error_code?: string | null;
  reason?: string | null;
  attempts: number;
  format: string;
  duration_ms: number;
  actor: string;
}

export const usageOf = (r: Record<string, unknown>): Usage => ({
  prompt_tokens: toInt(r.prompt_tokens ?? 0),
  completion_tokens: toInt(r.completion_tokens ?? 0),
  total_tokens: toInt(r.total_tokens ?? 0),
});
/** INTEGER columns: a provider reporting absurd counts must not break the insert. */
const clampInt = (n: number) => Math.max(0, Math.min(2_000_000_000, Math.floor(Number.isFinite(n) ? n : 0)));

export class AiCalls {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /** Inserts the record; answers its id. */
  async record(call: AiCallRecord, t?: Transaction): Promise<number> {
    const { insertId } = await this.deps.db.execute(
      `INSERT INTO ai_calls (kind, item_id, model, prompt_tokens, completion_tokens, total_tokens, job_id, outcome, error_code, reason, attempts, format, duration_ms, actor, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        call.kind,
        call.item_id,
        call.model.slice(0, 191),
        clampInt(call.usage.prompt_tokens),
        clampInt(call.usage.completion_tokens),
        clampInt(call.usage.total_tokens),
        call.job_id,
        call.outcome,
        call.error_code?.slice(0, 64) ?? null,
        call.reason?.slice(0, 32) ?? null,
        clampInt(call.attempts),
        call.format.slice(0, 16),
        clampInt(call.duration_ms),
        call.actor.slice(0, 191),
        this.deps.clock.now(),
      ],
      t,
    );
    return insertId ?? 0;
  }

  /** A dry run's record becomes the saved one when its proposal is kept: the tokens were spent once. */
  async markSaved(id: number, actor: string, t: Transaction): Promise<boolean> {
    const { affected } = await this.deps.db.execute(
      "UPDATE ai_calls SET outcome = 'saved', actor = ? WHERE id = ? AND outcome = 'dry_run'",
      [actor.slice(0, 191), id],
      t,
    );
    return affected > 0;
  }

  /** Which of `ids` have a saved generation (their text is AI-written). */
  async saved(kind: AiKind, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.deps.db.select<{ item_id: unknown }>(
      `SELECT DISTINCT item_id FROM ai_calls WHERE kind = ? AND outcome = 'saved' AND item_id IN (${ids.map(() => '?').join(', ')})`,
      [kind, ...ids],
    );
    return new Set(rows.map((r) => toInt(r.item_id)));
  }

  /** What a job's generations spent, by outcome. */
  async jobUsage(jobId: number): Promise<{ calls: number; tokens: Usage; models: string[] }> {
    const [rows, models] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        'SELECT COUNT(*) AS n, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE job_id = ?',
        [jobId],
      ),
      this.deps.db.select<{ model: unknown }>('SELECT DISTINCT model FROM ai_calls WHERE job_id = ? ORDER BY model', [jobId]),
    ]);
    return { calls: toInt(rows[0].n), tokens: usageOf(rows[0]), models: models.map((m) => String(m.model)) };
  }
}
