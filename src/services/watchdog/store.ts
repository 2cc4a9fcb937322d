// Every SQL statement on network_watchdog: one row per network with its state, the current
// outage's alarm and the cached baseline. The watchdog service is the only writer; WatchdogStates
// is the read model the overview and the Prometheus gauge read.
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toIso } from '../../db/values.js';
import type { Baseline } from './baseline.js';
import type { StallReason, WatchdogState } from './rules.js';

/** A network's stored watchdog row. */
export interface WatchdogRow {
  network: string;
  state: WatchdogState;
  reasons: StallReason[];
  stalled_since: string | null;
  last_alarm_at: string | null;
  last_alarm: StallReason[] | null;
  recovered_at: string | null;
  checked_at: string | null;
  baseline: Baseline | null;
  baseline_at: Date | null;
}

function parse<T>(value: unknown, fallback: T): T {
  if (typeof value !== 'string' || !value) return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

function toRow(r: Record<string, unknown>): WatchdogRow {
  return {
    network: String(r.network),
    state: String(r.state) as WatchdogState,
    reasons: parse<StallReason[]>(r.reasons, []),
    stalled_since: toIso(r.stalled_since),
    last_alarm_at: toIso(r.last_alarm_at),
    last_alarm: parse<StallReason[] | null>(r.last_alarm, null),
    recovered_at: toIso(r.recovered_at),
    checked_at: toIso(r.checked_at),
    baseline: parse<Baseline | null>(r.baseline, null),
    baseline_at: toDate(r.baseline_at),
  };
}

export class WatchdogStore {
  constructor(private readonly db: Database) {}

  async get(network: string, t?: Transaction): Promise<WatchdogRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(
      `SELECT * FROM network_watchdog WHERE network = ?${t ? this.db.forUpdate() : ''}`,
      [network],
      t,
    );
    return row ? toRow(row) : null;
  }

  /** The row of `network` locked in `t`, made (state `unknown`) when there is none yet. */
  async lock(network: string, now: Date, t: Transaction): Promise<WatchdogRow> {
    await this.db.execute(this.db.insertIgnore('network_watchdog', ['network', 'state', 'updated_at']), [network, 'unknown', now], t);
    return (await this.get(network, t))!;
  }

  /** Keeps a freshly computed baseline (outside any check: it is a cache). */
  async saveBaseline(network: string, baseline: Baseline, now: Date): Promise<void> {
    await this.db.execute(
      this.db.upsert('network_watchdog', ['network', 'state', 'baseline', 'baseline_at', 'updated_at'], ['network'], ['baseline', 'baseline_at', 'updated_at']),
      [network, 'unknown', JSON.stringify(baseline), now, now],
    );
  }

  async update(
    network: string,
    values: Pick<WatchdogRow, 'state' | 'reasons' | 'stalled_since' | 'last_alarm_at' | 'last_alarm' | 'recovered_at'>,
    now: Date,
    t: Transaction,
  ): Promise<void> {
    await this.db.execute(
      `UPDATE network_watchdog SET state = ?, reasons = ?, stalled_since = ?, last_alarm_at = ?, last_alarm = ?, recovered_at = ?, checked_at = ?, updated_at = ?
       WHERE network = ?`,
      [
        values.state,
        JSON.stringify(values.reasons),
        values.stalled_since ? new Date(values.stalled_since) : null,
        values.last_alarm_at ? new Date(values.last_alarm_at) : null,
        values.last_alarm ? JSON.stringify(values.last_alarm) : null,
        values.recovered_at ? new Date(values.recovered_at) : null,
        now,
        now,
        network,
      ],
      t,
    );
  }
}

/** A stalled network as the overview lists it. */
export interface StalledNetwork {
  network: string;
  stalled_since: string | null;
  reasons: StallReason[];
}

/**
 * The read model of network_watchdog for the overview and the Prometheus gauge: built before both
 * (it needs only the database), so neither depends on the watchdog service.
 */
export class WatchdogStates {
  constructor(private readonly deps: { db: Database }) {}

  /** Every network the watchdog has checked, and whether it is stalled now (the gauge). */
  async states(): Promise<{ network: string; stalled: boolean }[]> {
    const rows = await this.deps.db.select<{ network: unknown; state: unknown }>('SELECT network, state FROM network_watchdog WHERE checked_at IS NOT NULL');
    return rows.map((r) => ({ network: String(r.network), stalled: r.state === 'stalled' }));
  }

  /** The stalled networks, longest stalled first (the overview's line). */
  async stalled(): Promise<StalledNetwork[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      "SELECT network, stalled_since, reasons FROM network_watchdog WHERE state = 'stalled' ORDER BY stalled_since, network",
    );
    return rows.map((r) => ({ network: String(r.network), stalled_since: toIso(r.stalled_since), reasons: parse<StallReason[]>(r.reasons, []) }));
  }
}
