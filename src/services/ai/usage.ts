// A read model of the `ai_calls` table (and of whether a provider is set) for other domains'
// answers: an advertiser's or a coupon's last generation, and the overview's AI block. SQL reads
// only; AiService stays the table's only writer (calls.ts). The composition root builds it before
// the advertisers, coupons and overview services that show it.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt, toIso } from '../../db/values.js';
import { usageOf, type AiKind, type AiOutcome } from './calls.js';
import type { Usage } from './provider.js';
import type { AiSettingsStore } from './settings.js';

/** An item's last generation, as its answers show it. */
export interface AiGeneration {
  model: string;
  tokens: Usage;
  outcome: AiOutcome;
  at: string | null;
}

/** Calls and tokens over a window. */
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

/** The AI block of the overview: calls and tokens over the window, and whether a provider is set. */
export type AiOverviewBlock = AiOverview & { configured: boolean; model: string | null };

export interface AiUsageDeps {
  db: Database;
  clock: Clock;
  /** The AI settings (stored over configured): whether a provider is set, and its model. */
  settings: Pick<AiSettingsStore, 'view'>;
}

export class AiUsage {
  constructor(private readonly deps: AiUsageDeps) {}

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
    for (const r of rows)
      out.set(toInt(r.item_id), { model: String(r.model), tokens: usageOf(r), outcome: String(r.outcome) as AiOutcome, at: toIso(r.created_at) });
    return out;
  }

  /** The overview's AI block: calls and tokens over the last `days` days, and whether a provider is set. */
  async overview(days: number): Promise<AiOverviewBlock> {
    const [usage, view] = await Promise.all([this.usage(days), this.deps.settings.view()]);
    return { configured: view.configured, model: view.model, ...usage };
  }

  /** Calls and tokens of the last `days` days. */
  private async usage(days: number): Promise<AiOverview> {
    const since = new Date(this.deps.clock.now().getTime() - days * 86_400_000);
    const [byOutcome, byModel, last] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        'SELECT outcome, COUNT(*) AS n, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE created_at >= ? GROUP BY outcome',
        [since],
      ),
      this.deps.db.select<Record<string, unknown>>(
        'SELECT model, COUNT(*) AS n, SUM(total_tokens) AS total_tokens FROM ai_calls WHERE created_at >= ? GROUP BY model ORDER BY SUM(total_tokens) DESC, model LIMIT 20',
        [since],
      ),
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
      tokens = {
        prompt_tokens: tokens.prompt_tokens + u.prompt_tokens,
        completion_tokens: tokens.completion_tokens + u.completion_tokens,
        total_tokens: tokens.total_tokens + u.total_tokens,
      };
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
