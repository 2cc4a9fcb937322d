// The shapes of the schedule service's answers (GET /schedules, `cashtrack schedules`) and how a
// `schedule_runs` row (with its job's status) becomes one.
import type { ScheduleName } from '../../config/index.js';
import { toInt, toIso } from '../../db/values.js';

export type RunTrigger = 'cron' | 'catch_up' | 'manual';

/** One claimed run of a schedule. */
export interface ScheduleRun {
  id: number;
  schedule: string;
  /** The network it ran for (per-network schedules), else null. */
  network: string | null;
  /** The due time it was claimed for (a manual run: when it was asked for). */
  slot: string;
  trigger: RunTrigger;
  /** `queued`: `job_id` is the job it queued. `skipped`: `reason` says why (`job_id`: the job still under way). */
  status: 'queued' | 'skipped';
  job_id: number | null;
  /** The job's status now (null once the job was pruned). */
  job_status: string | null;
  reason: string | null;
  claimed_by: string;
  actor: string;
  created_at: string;
}

/** One network of a per-network schedule. */
export interface ScheduleTarget {
  network: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  next_due: string | null;
  last_run: ScheduleRun | null;
}

/** A schedule as `schedules list` and GET /schedules show it. */
export interface ScheduleView {
  name: string;
  job_type: string;
  description: string;
  /** False while this build has no job of `job_type` (it is then never fired). */
  available: boolean;
  cron: string;
  timezone: string;
  enabled: boolean;
  catch_up: boolean;
  per_network: boolean;
  /** The next slot it fires at (the earliest of its networks'); null when it will not fire. */
  next_due: string | null;
  /** The latest run (of any of its networks). */
  last_run: ScheduleRun | null;
  /** Per-network schedules: each enabled, configured network it runs for. */
  networks: ScheduleTarget[] | null;
}

/** A cron task for the daemon to fire: a schedule's own expression, or one network's override. */
export interface CronTask {
  schedule: ScheduleName;
  /** The networks without an expression of their own (`null`), or this network alone. */
  network: string | null;
  cron: string;
  timezone: string;
}

export const RUN_COLUMNS =
  'r.id, r.schedule, r.network, r.slot, r.trigger_kind, r.status, r.job_id, r.reason, r.claimed_by, r.actor, r.created_at, j.status AS job_status';

export function shapeRun(row: Record<string, unknown>): ScheduleRun {
  return {
    id: toInt(row.id),
    schedule: String(row.schedule),
    network: row.network ? String(row.network) : null,
    slot: toIso(row.slot)!,
    trigger: String(row.trigger_kind) as RunTrigger,
    status: String(row.status) as ScheduleRun['status'],
    job_id: row.job_id === null || row.job_id === undefined ? null : toInt(row.job_id),
    job_status: row.job_status ? String(row.job_status) : null,
    reason: row.reason === null || row.reason === undefined ? null : String(row.reason),
    claimed_by: String(row.claimed_by),
    actor: String(row.actor),
    created_at: toIso(row.created_at)!,
  };
}
