// A network's normal intake, learned from its history: the mean count per hour of the week (UTC,
// 0 = Sunday 00:00-01:00 ... 167 = Saturday 23:00-24:00) over the last `history_days`, and the
// Poisson bound that says when what came in over a window is too little to be chance.
//
// Why a mean per hour of the week: shoppers buy by the clock and the weekday, so a Tuesday 14:00
// that is busy and a 03:00 that is quiet are both normal; each hour is compared with the same hour
// of the previous weeks. Each hour of the week is averaged over the hours of it the history holds
// (from the network's first intake on), so a network that started 15 days ago is not diluted by
// the empty weeks before it.
//
// Why Poisson: conversions arrive independently of one another, so the count in a window whose
// expected count is E is roughly Poisson(E). The chance of seeing k or fewer is P(X <= k); an
// observed count with P below `significance` (e.g. 0.001) is silence that chance does not explain.
// With nothing observed P = e^-E, so the test alone only fires when E > ln(1/significance)
// (6.9 for 0.001): a quiet hour with E = 0.5 can never alarm, however silent it is.

/** Hours in a week. */
export const HOURS_OF_WEEK = 168;
const HOUR = 3_600_000;

/** What the watchdog keeps of a network's history (stored as JSON in network_watchdog.baseline). */
export interface Baseline {
  /** Expected intake per hour of the week (index 0: Sunday 00:00 UTC), rounded to 1/1000. */
  hours: number[];
  /** The history read: [from, to) (whole hours). */
  from: string;
  to: string;
  /** The first hour with any intake in it, or null when there was none. */
  first_at: string | null;
  /** Intake counted over the history. */
  events: number;
  /** Days from the first intake to the end of the history. */
  span_days: number;
}

/** The hour of the week of an instant (UTC). */
export function hourOfWeek(at: Date): number {
  return at.getUTCDay() * 24 + at.getUTCHours();
}

/** The start of the UTC hour holding `at`. */
export function hourStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR) * HOUR);
}

/** The `YYYY-MM-DD HH` key the read models group by (db.hourOf). */
export function hourKey(at: Date): string {
  return at.toISOString().slice(0, 13).replace('T', ' ');
}

/** Adds per-hour counts together (postbacks and polled orders). */
export function addCounts(...maps: Map<string, number>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of maps) for (const [k, n] of m) out.set(k, (out.get(k) ?? 0) + n);
  return out;
}

/** The baseline of the hourly counts of [from, to) (both on hour boundaries). */
export function buildBaseline(counts: Map<string, number>, from: Date, to: Date): Baseline {
  let first: Date | null = null;
  let events = 0;
  for (let t = from.getTime(); t < to.getTime(); t += HOUR) {
    const n = counts.get(hourKey(new Date(t))) ?? 0;
    if (n > 0 && !first) first = new Date(t);
    events += n;
  }
  const sums = new Array<number>(HOURS_OF_WEEK).fill(0);
  const seen = new Array<number>(HOURS_OF_WEEK).fill(0);
  if (first) {
    for (let t = first.getTime(); t < to.getTime(); t += HOUR) {
      const at = new Date(t);
      const h = hourOfWeek(at);
      sums[h] += counts.get(hourKey(at)) ?? 0;
      seen[h]++;
    }
  }
  return {
    hours: sums.map((s, h) => (seen[h] ? Math.round((s / seen[h]) * 1000) / 1000 : 0)),
    from: from.toISOString(),
    to: to.toISOString(),
    first_at: first ? first.toISOString() : null,
    events,
    span_days: first ? Math.round(((to.getTime() - first.getTime()) / 86_400_000) * 100) / 100 : 0,
  };
}

/** The intake the baseline expects over [from, to): each hour's mean times the part of it inside. */
export function expectedOver(baseline: Baseline, from: Date, to: Date): number {
  let expected = 0;
  let t = from.getTime();
  while (t < to.getTime()) {
    const next = Math.min(to.getTime(), (Math.floor(t / HOUR) + 1) * HOUR);
    expected += (baseline.hours[hourOfWeek(new Date(t))] ?? 0) * ((next - t) / HOUR);
    t = next;
  }
  return expected;
}

/**
 * P(X <= k) for X ~ Poisson(mean), summed in log space so a large mean (e^-1000 is 0 as a double)
 * stays exact enough. k is small where it matters (the watchdog asks only below a fraction of the mean).
 */
export function poissonCdf(k: number, mean: number): number {
  if (k < 0) return 0;
  if (mean <= 0) return 1;
  let logTerm = -mean;
  let logSum = logTerm;
  for (let i = 1; i <= Math.floor(k); i++) {
    logTerm += Math.log(mean / i);
    const hi = Math.max(logSum, logTerm);
    logSum = hi + Math.log(Math.exp(logSum - hi) + Math.exp(logTerm - hi));
  }
  return Math.min(1, Math.exp(logSum));
}
