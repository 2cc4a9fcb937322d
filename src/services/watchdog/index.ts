// The intake watchdog: notices when a network falls silent. For each enabled network it learns the
// normal intake (accepted postbacks plus orders its poll brought in, per hour of the week over the
// last `watchdog.history_days`, baseline.ts), judges the last window against it together with the
// network's sync/poll outcomes (rules.ts), and keeps the state in network_watchdog (store.ts), so
// one outage raises one `network.stalled` (webhook event, hook, log warning) and one
// `network.recovered`, however often the `networks.watchdog` job runs.
//
// Its own domain rather than part of networks: it reads three domains (networks' run outcomes,
// postbacks, orders, each through its owner's read model) and the networks service is built
// before postbacks and orders, so putting it there would make networks depend on its dependants.
import type { Clock } from '../../clock.js';
import type { Config, WatchdogConfig } from '../../config/index.js';
import { CronSlots } from '../../cron-slots.js';
import type { Database } from '../../db/database.js';
import { HOOKS } from '../../hooks/index.js';
import type { LogService } from '../logs/index.js';
import type { Network, NetworkService } from '../networks/index.js';
import type { OrderCounts } from '../orders/index.js';
import type { PostbackCounts } from '../postbacks/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import { addCounts, buildBaseline, expectedOver, HOURS_OF_WEEK, hourOfWeek, hourStart, type Baseline } from './baseline.js';
import { intakeLow, judge, type Figures, type RunFigures, type RunKind, type StallReason, type WatchdogState } from './rules.js';
import { WatchdogStore, type WatchdogRow } from './store.js';

export { WatchdogStates, type StalledNetwork } from './store.js';
export { WATCHDOG_STATES, type StallReason, type WatchdogState } from './rules.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Which schedule runs each kind of run (the coupon refresh is not intake: only its logins count). */
const RUN_SCHEDULES: Partial<Record<RunKind, 'orders_poll' | 'advertisers_sync'>> = { orders: 'orders_poll', advertisers: 'advertisers_sync' };
const RUN_KINDS: RunKind[] = ['orders', 'advertisers', 'coupons'];

export interface WatchdogServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  events: WebhookEvents;
  networks: Pick<NetworkService, 'list' | 'get'>;
  postbackCounts: Pick<PostbackCounts, 'acceptedByHour' | 'accepted'>;
  orderCounts: Pick<OrderCounts, 'polledByHour' | 'polled'>;
  schedules: Config['schedules'];
  config: WatchdogConfig;
}

/** What the hooks and webhook events carry: the network's state after the change. */
export interface WatchdogSummary {
  network: string;
  state: WatchdogState;
  reasons: StallReason[];
  stalled_since: string | null;
  last_alarm_at: string | null;
  recovered_at: string | null;
}

/** One network's health (GET /networks/{id}/health, `cashtrack networks health`). */
export interface NetworkHealth extends WatchdogSummary {
  enabled: boolean;
  /** Whether the baseline rests on enough history to judge intake. */
  enough_history: boolean;
  /** When the watchdog last checked it (null: not yet; the state is then `unknown`). */
  checked_at: string | null;
  last_alarm: { at: string; reasons: StallReason[] } | null;
  baseline: {
    hour_of_week: number;
    /** What the baseline expects in the current hour. */
    expected_this_hour: number;
    history_from: string;
    first_at: string | null;
    events: number;
    span_days: number;
    min_history_days: number;
    min_history_events: number;
  };
  /** Intake over the last hour and what the baseline expected of it. */
  last_hour: { observed: number; expected: number };
  /** The window silence is judged over. */
  window: { minutes: number; observed: number; expected: number; probability: number; below_normal: boolean };
  runs: { run: RunKind; ok_at: string | null; auth_failures: number; allowed_minutes: number | null }[];
}

/** What one check of every enabled network did (the job's result). */
export interface WatchdogCheck {
  checked: number;
  ok: number;
  stalled: number;
  unknown: number;
  alarms: string[];
  recoveries: string[];
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** Learns each network's normal intake and alarms once per outage when it falls silent. */
export class WatchdogService {
  private readonly store: WatchdogStore;
  private readonly slots = new Map<string, CronSlots>();

  constructor(private readonly deps: WatchdogServiceDeps) {
    this.store = new WatchdogStore(deps.db);
  }

  /** Checks every enabled network, raising `network.stalled` / `network.recovered` on a change of state. */
  async check(actor: string): Promise<WatchdogCheck> {
    const result: WatchdogCheck = { checked: 0, ok: 0, stalled: 0, unknown: 0, alarms: [], recoveries: [] };
    for (const network of await this.deps.networks.list()) {
      if (!network.enabled) continue;
      const change = await this.checkOne(network, actor);
      result.checked++;
      result[change.state]++;
      if (change.alarm) result.alarms.push(network.id);
      if (change.recovered) result.recoveries.push(network.id);
    }
    return result;
  }

  /** The health of every enabled network, by id (`cashtrack networks health` without an id). */
  async healthAll(): Promise<NetworkHealth[]> {
    const out: NetworkHealth[] = [];
    for (const n of await this.deps.networks.list()) if (n.enabled) out.push(await this.health(n.id));
    return out;
  }

  /** One network's health now: its stored state and last alarm beside the live figures. */
  async health(id: string): Promise<NetworkHealth> {
    const network = await this.deps.networks.get(id);
    const now = this.deps.clock.now();
    const row = await this.store.get(network.id);
    const baseline = await this.baseline(network.id, row, now, false);
    const figures = await this.figures(network, baseline, now, row);
    const live = judge(figures, row?.state === 'stalled' ? row.reasons : [], this.deps.config);
    const lastHour = await this.intake(network.id, new Date(now.getTime() - 60 * MINUTE), now);
    const { probability, low } = intakeLow(figures.window.observed, figures.window.expected, this.deps.config);
    return {
      ...summary(network.id, row),
      enabled: network.enabled,
      enough_history: live.enough_history,
      checked_at: row?.checked_at ?? null,
      last_alarm: row?.last_alarm_at ? { at: row.last_alarm_at, reasons: row.last_alarm ?? [] } : null,
      baseline: {
        hour_of_week: hourOfWeek(now),
        expected_this_hour: baseline.hours[hourOfWeek(now)] ?? 0,
        history_from: baseline.from,
        first_at: baseline.first_at,
        events: baseline.events,
        span_days: baseline.span_days,
        min_history_days: this.deps.config.min_history_days,
        min_history_events: this.deps.config.min_history_events,
      },
      last_hour: { observed: lastHour, expected: round(expectedOver(baseline, new Date(now.getTime() - 60 * MINUTE), now)) },
      window: {
        minutes: this.deps.config.window_minutes,
        observed: figures.window.observed,
        expected: round(figures.window.expected),
        probability: Number(probability.toPrecision(3)),
        below_normal: live.enough_history && low,
      },
      runs: figures.runs.map((r) => ({
        run: r.run,
        ok_at: r.ok_at ? r.ok_at.toISOString() : null,
        auth_failures: r.auth_failures,
        allowed_minutes: r.allowed_ms === null ? null : Math.round(r.allowed_ms / MINUTE),
      })),
    };
  }

  private async checkOne(network: Network, actor: string): Promise<{ state: WatchdogState; alarm: boolean; recovered: boolean }> {
    const { db, clock, events, logger, config } = this.deps;
    const now = clock.now();
    const row = await this.store.get(network.id);
    const baseline = await this.baseline(network.id, row, now, true);
    const figures = await this.figures(network, baseline, now, row);
    return db.transaction(async (t) => {
      // The row locked: two checks at once (the schedule and a hand-run job) decide one change.
      const before = await this.store.lock(network.id, now, t);
      const judged = judge(figures, before.state === 'stalled' ? before.reasons : [], config);
      const at = now.toISOString();
      const alarm = judged.state === 'stalled' && before.state !== 'stalled';
      const recovered = before.state === 'stalled' && judged.state !== 'stalled';
      const next = {
        state: judged.state,
        reasons: judged.reasons,
        stalled_since: judged.state === 'stalled' ? (alarm ? at : before.stalled_since) : null,
        last_alarm_at: alarm ? at : before.last_alarm_at,
        last_alarm: alarm ? judged.reasons : before.last_alarm,
        recovered_at: recovered ? at : before.recovered_at,
      };
      await this.store.update(network.id, next, now, t);
      const shown: WatchdogSummary = {
        network: network.id,
        state: next.state,
        reasons: next.reasons,
        stalled_since: next.stalled_since,
        last_alarm_at: next.last_alarm_at,
        recovered_at: next.recovered_at,
      };
      if (alarm) {
        await events.emit(t, HOOKS.networkStalled, shown, { actor });
        logger.warning('watchdog', 'Network stalled', { network: network.id, reasons: judged.reasons, actor });
      }
      if (recovered) {
        await events.emit(t, HOOKS.networkRecovered, { ...shown, stalled_since: before.stalled_since }, { actor });
        logger.info('watchdog', 'Network recovered', { network: network.id, stalled_since: before.stalled_since, actor });
      }
      return { state: judged.state, alarm, recovered };
    });
  }

  /**
   * The baseline of the history up to the current hour: the stored one while it is current, else
   * computed (and kept when `save`). During an outage the stored one is kept as it was: the
   * silence must not teach the watchdog that silence is normal for the network.
   */
  private async baseline(network: string, row: WatchdogRow | null, now: Date, save: boolean): Promise<Baseline> {
    const to = hourStart(now);
    const stored = row?.baseline?.hours?.length === HOURS_OF_WEEK ? row.baseline : null;
    if (stored && (stored.to === to.toISOString() || row?.state === 'stalled')) return stored;
    const from = new Date(to.getTime() - this.deps.config.history_days * DAY);
    const [postbacks, polled] = await Promise.all([
      this.deps.postbackCounts.acceptedByHour(network, from, to),
      this.deps.orderCounts.polledByHour(network, from, to),
    ]);
    const baseline = buildBaseline(addCounts(postbacks, polled), from, to);
    if (save) await this.store.saveBaseline(network, baseline, now);
    return baseline;
  }

  private async intake(network: string, from: Date, to: Date): Promise<number> {
    const [postbacks, polled] = await Promise.all([this.deps.postbackCounts.accepted(network, from, to), this.deps.orderCounts.polled(network, from, to)]);
    return postbacks + polled;
  }

  /**
   * The figures the rule judges. The window starts no earlier than the last recovery: a new outage
   * is judged over the time since the last one ended, not over the silence that one left in the window.
   */
  private async figures(network: Network, baseline: Baseline, now: Date, row: WatchdogRow | null): Promise<Figures> {
    const { config } = this.deps;
    const recoveredAt = row?.recovered_at ? new Date(row.recovered_at).getTime() : -Infinity;
    const windowFrom = new Date(Math.min(now.getTime(), Math.max(now.getTime() - config.window_minutes * MINUTE, recoveredAt)));
    const recoveryFrom = new Date(now.getTime() - config.recovery_minutes * MINUTE);
    const [windowObserved, recoveryObserved] = await Promise.all([this.intake(network.id, windowFrom, now), this.intake(network.id, recoveryFrom, now)]);
    return {
      now,
      baseline,
      window: { observed: windowObserved, expected: expectedOver(baseline, windowFrom, now) },
      recovery: { observed: recoveryObserved, expected: expectedOver(baseline, recoveryFrom, now) },
      runs: this.runs(network, now),
    };
  }

  /** Each kind of run's last success and refused logins (networks' `last_sync_result`), with what its schedule allows. */
  private runs(network: Network, now: Date): RunFigures[] {
    const result = network.last_sync_result && typeof network.last_sync_result === 'object' ? (network.last_sync_result as Record<string, unknown>) : {};
    const out: RunFigures[] = [];
    for (const run of RUN_KINDS) {
      const outcome = result[run];
      if (!outcome || typeof outcome !== 'object') continue;
      const o = outcome as Record<string, unknown>;
      const okAt = typeof o.ok_at === 'string' ? new Date(o.ok_at) : null;
      out.push({
        run,
        ok_at: okAt && !Number.isNaN(okAt.getTime()) ? okAt : null,
        auth_failures: typeof o.auth_failures === 'number' ? o.auth_failures : 0,
        allowed_ms: this.allowed(run, network.id, now),
      });
    }
    return out;
  }

  /** `run_intervals` times the interval of the schedule running `run` for `network`, or null when none does. */
  private allowed(run: RunKind, network: string, now: Date): number | null {
    const name = RUN_SCHEDULES[run];
    if (!name) return null;
    const schedule = this.deps.schedules[name];
    const own = schedule.networks?.[network];
    if (!(own?.enabled ?? schedule.enabled)) return null;
    const expression = own?.cron ?? schedule.cron;
    const key = `${expression}|${schedule.timezone}`;
    let slots = this.slots.get(key);
    if (!slots) {
      slots = new CronSlots(expression, schedule.timezone);
      this.slots.set(key, slots);
    }
    const last = slots.previous(now);
    const before = last ? slots.previous(new Date(last.getTime() - 1)) : null;
    if (!last || !before) return null;
    return this.deps.config.run_intervals * (last.getTime() - before.getTime());
  }
}

function summary(network: string, row: WatchdogRow | null): WatchdogSummary {
  return {
    network,
    state: row?.checked_at ? row.state : 'unknown',
    reasons: row?.checked_at ? row.reasons : [],
    stalled_since: row?.stalled_since ?? null,
    last_alarm_at: row?.last_alarm_at ?? null,
    recovered_at: row?.recovered_at ?? null,
  };
}
