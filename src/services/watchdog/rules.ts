// The watchdog's one rule: from a network's figures and its previous state, its state now and why.
// Pure (no database, no clock): services/watchdog/index.ts gathers the figures and keeps the state.
//
// A network is `stalled` when any of these holds:
// - `intake_low`: with enough history, what came in over the last `window_minutes` is both under
//   `min_ratio` of what the baseline expects and improbable as chance (Poisson P(X <= observed)
//   below `significance`, see baseline.ts). Once stalled for it, it stays so until intake is back:
//   over the last `recovery_minutes` something came in and at least `min_ratio` of the expected
//   (a short window, so a network recovers minutes after its postbacks return, not an hour later).
// - `run_overdue`: a scheduled sync or poll has not succeeded for more than `run_intervals` of its
//   schedule's interval (only for a run that has succeeded once: a network never polled has
//   nothing to be late for).
// - `auth_failing`: the network refused the credentials `auth_failures` runs in a row.
// It is `unknown` when nothing is wrong but the history is too short to judge its intake, else `ok`.
import type { WatchdogConfig } from '../../config/index.js';
import { poissonCdf, type Baseline } from './baseline.js';

export const WATCHDOG_STATES = ['ok', 'stalled', 'unknown'] as const;
export type WatchdogState = (typeof WATCHDOG_STATES)[number];

/** A sync or poll (`advertisers`, `orders`) or refresh (`coupons`), as its last outcome tells. */
export type RunKind = 'advertisers' | 'orders' | 'coupons';

export type StallReason =
  | { kind: 'intake_low'; observed: number; expected: number; window_minutes: number; probability: number }
  | { kind: 'run_overdue'; run: RunKind; last_ok_at: string; allowed_minutes: number }
  | { kind: 'auth_failing'; run: RunKind; failures: number };

export interface RunFigures {
  run: RunKind;
  /** When the run last succeeded, or null. */
  ok_at: Date | null;
  /** Runs in a row the network refused the credentials for. */
  auth_failures: number;
  /** How long the schedule lets pass between successes (run_intervals x interval), or null when it is not scheduled. */
  allowed_ms: number | null;
}

export interface Figures {
  now: Date;
  baseline: Baseline;
  /** Intake over the last `window_minutes` and what the baseline expects of it. */
  window: { observed: number; expected: number };
  /** Intake over the last `recovery_minutes` and what the baseline expects of it. */
  recovery: { observed: number; expected: number };
  runs: RunFigures[];
}

export interface Judgement {
  state: WatchdogState;
  reasons: StallReason[];
  enough_history: boolean;
}

/** Whether the baseline rests on enough history: `min_history_days` from the first intake and `min_history_events` in all. */
export function enoughHistory(baseline: Baseline, config: WatchdogConfig): boolean {
  return baseline.span_days >= config.min_history_days && baseline.events >= config.min_history_events;
}

/** Whether `observed` is far below `expected`: under `min_ratio` of it and improbable as chance. */
export function intakeLow(observed: number, expected: number, config: WatchdogConfig): { low: boolean; probability: number } {
  const probability = poissonCdf(observed, expected);
  return { low: observed < config.min_ratio * expected && probability < config.significance, probability };
}

/** Whether intake is back after a stall: something came in over the recovery window, and not far below normal. */
export function intakeBack(observed: number, expected: number, config: WatchdogConfig): boolean {
  return observed > 0 && observed >= config.min_ratio * expected;
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The state now, given the figures and the reasons the previous check stalled for (empty if it did not). */
export function judge(figures: Figures, previous: StallReason[], config: WatchdogConfig): Judgement {
  const reasons: StallReason[] = [];
  const enough = enoughHistory(figures.baseline, config);
  if (enough) {
    const { observed, expected } = figures.window;
    const { low, probability } = intakeLow(observed, expected, config);
    const wasLow = previous.some((r) => r.kind === 'intake_low');
    const stillLow = wasLow ? !intakeBack(figures.recovery.observed, figures.recovery.expected, config) : low;
    if (stillLow) {
      reasons.push({
        kind: 'intake_low',
        observed,
        expected: round(expected),
        window_minutes: config.window_minutes,
        probability: Number(probability.toPrecision(3)),
      });
    }
  }
  for (const run of figures.runs) {
    if (run.auth_failures >= config.auth_failures) reasons.push({ kind: 'auth_failing', run: run.run, failures: run.auth_failures });
    if (run.ok_at && run.allowed_ms !== null && figures.now.getTime() - run.ok_at.getTime() > run.allowed_ms) {
      reasons.push({ kind: 'run_overdue', run: run.run, last_ok_at: run.ok_at.toISOString(), allowed_minutes: Math.round(run.allowed_ms / 60_000) });
    }
  }
  const state: WatchdogState = reasons.length ? 'stalled' : enough ? 'ok' : 'unknown';
  return { state, reasons, enough_history: enough };
}
