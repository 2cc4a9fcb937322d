// The `ai_calls` table: one row per generation with the model and the tokens it spent, so an
// administrator sees what an item, a bulk run and the site's AI use cost. Written by AiService only.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt, toIso } from '../../db/values.js';
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

/** An item's last generation, as its answers show it. */
export interface AiGeneration {
  model: string;
  tokens: Usage;
  outcome: AiOutcome;
  at: string | null;
}

/** The AI block of the overview. */
export interface AiOverview {
  days: number;
  since: string;
  calls: number;
  by_outcome: Record<AiOutcome, number>;
  tokens: Usage;
  /** Tokens per model, most used first. */
  by_model: { model: string; calls: number; total_tokens: number }[];
  last_call_at: string | null;
}

const usageOf = (r: Record<string, unknown>): Usage => ({ prompt_tokens: toInt(r.prompt_tokens ?? 0), completion_tokens: toInt(r.completion_tokens ?? 0), total_tokens: toInt(r.total_tokens ?? 0) });
/** INTEGER columns: a provider reporting absurd counts must not break the insert. */
const clampInt = (n: number) => Math.max(0, Math.min(2_000_000_000, Math.floor(Number.isFinite(n) ? n : 0)));

export class AiCalls {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  async record(call: AiCallRecord, t?: Transaction): Promise<void> {
    await this.deps.db.execute(
      `INSERT INTO ai_calls (kind, item_id, model, prompt_tokens, completion_tokens, total_tokens, job_id, outcome, error_code, reason, attempts, format, duration_ms, actor, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        call.kind, call.item_id, call.model.slice(0, 191), clampInt(call.usage.prompt_tokens), clampInt(call.usage.completion_tokens), clampInt(call.usage.total_tokens),
        call.job_id, call.outcome, call.error_code?.slice(0, 64) ?? null, call.reason?.slice(0, 32) ?? null, clampInt(call.attempts), call.format.slice(0, 16),
        clampInt(call.duration_ms), call.actor.slice(0, 191), this.deps.clock.now(),
      ],
      t,
    );
  }

  /** The last generation of each item of `ids` (of any outcome). */
  async lastFor(kind: AiKind, ids: number[]): Promise<Map<number, AiGeneration>> {
    const out = new Map<number, AiGeneration>();
    if (ids.length === 0) return out;
    const marks = ids.map(() => '?').join(', ');
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT c.item_id, c.model, c.prompt_tokens, c.completion_tokens, c.total_tokens, c.outcome, c.created_at FROM ai_calls c
       JOIN (SELECT item_id, MAX(id) AS id FROM ai_calls WHERE kind = ? AND item_id IN (${marks}) GROUP BY item_id) last ON last.id = c.id`,
      [kind, ...ids],
    );
    for (const r of rows) out.set(toInt(r.item_id), { model: String(r.model), tokens: usageOf(r), outcome: String(r.outcome) as AiOutcome, at: toIso(r.created_at) });
    return out;
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
      this.deps.db.select<Record<string, unknown>>('SELECT COUNT(*) AS n, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE job_id = ?', [jobId]),
      this.deps.db.select<{ model: unknown }>('SELECT DISTINCT model FROM ai_calls WHERE job_id = ? ORDER BY model', [jobId]),
    ]);
    return { calls: toInt(rows[0].n), tokens: usageOf(rows[0]), models: models.map((m) => String(m.model)) };
  }

  /** Calls and tokens of the last `days` days. */
  async overview(days: number): Promise<AiOverview> {
    const since = new Date(this.deps.clock.now().getTime() - days * 86_400_000);
    const [byOutcome, byModel, last] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        'SELECT outcome, COUNT(*) AS n, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE created_at >= ? GROUP BY outcome',
        [since],
      ),
      this.deps.db.select<Record<string, unknown>>('SELECT model, COUNT(*) AS n, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE created_at >= ? GROUP BY model ORDER BY SUM(total_tokens) DESC, model LIMIT 20', [since]),
      this.deps.db.select<{ at: unknown }>('SELECT MAX(created_at) AS at FROM ai_calls'),
    ]);
    const counts: Record<AiOutcome, number> = { saved: 0, dry_run: 0, failed: 0 };
    let tokens: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    let calls = 0;
    for (const r of byOutcome) {
      const n = toInt(r.n);
      calls += n;
      if (String(r.outcome) in counts) counts[String(r.outcome) as AiOutcome] = n;
      const u = usageOf(r);
      tokens = { prompt_tokens: tokens.prompt_tokens + u.prompt_tokens, completion_tokens: tokens.completion_tokens + u.completion_tokens, total_tokens: tokens.total_tokens + u.total_tokens };
    }
    return {
      days,
      since: since.toISOString(),
      calls,
      by_outcome: counts,
      tokens,
      by_model: byModel.map((r) => ({ model: String(r.model), calls: toInt(r.n), total_tokens: toInt(r.total_tokens ?? 0) })),
      last_call_at: last[0]?.at ? toIso(last[0].at) : null,
    };
  }
}
