// Jobs as rows: the statuses, the shapes the API shows and the runner receives, and how a row
// becomes a job.
import { ListWhere, type OneOrMany } from '../../db/lists.js';
import { toInt, toIso } from '../../db/values.js';

export const JOB_STATUSES = ['queued', 'running', 'cancelling', 'cancelled', 'done', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** Statuses of a job that is not finished: a `unique` enqueue refuses a second one of these. */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'running', 'cancelling'];

export interface JobProgress {
  /** Items to do in all; null while unknown. Never below `done`. */
  total: number | null;
  /** Items handled so far, failed ones included. */
  done: number;
  /** How many of those failed. */
  failed: number;
}

/**
 * Progress as it is stored and shown: a known total is never below `done` (a network that lists
 * more than it said it would raises it), so a client's percentage stays within 0-100.
 */
export function boundedProgress(p: JobProgress): JobProgress {
  return { total: p.total === null ? null : Math.max(p.total, p.done), done: p.done, failed: p.failed };
}

/**
 * What a service walking a list in a job (a sync, a poll) reports once it learns the list's size:
 * its items in all, and how many of them it has handled so far (earlier attempts included), so the
 * job can add its other work to it.
 */
export interface WalkTotal {
  total: number;
  handled: number;
}

/** What `JobService.onProgress` listeners receive: the counts written, and the checkpoint when one was saved. */
export interface JobProgressUpdate {
  id: number;
  progress: JobProgress;
  /** The job's checkpoint value, on checkpoint writes only. */
  checkpoint?: unknown;
}

/** A job as the API and CLI show it. */
export interface Job {
  id: number;
  type: string;
  params: Record<string, unknown>;
  status: JobStatus;
  progress: JobProgress;
  result: Record<string, unknown> | null;
  error: string | null;
  attempts: number;
  actor: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

/** The fields `GET /jobs` sorts by, and the column each is. */
export const JOB_ORDERBY = {
  id: 'id',
  created_at: 'created_at',
  started_at: 'started_at',
  finished_at: 'finished_at',
  updated_at: 'updated_at',
  status: 'status',
  type: 'type',
} as const;
export type JobOrderby = keyof typeof JOB_ORDERBY;

/** The filters of the job list and of its counts per status. */
export interface JobWhere {
  status?: OneOrMany<JobStatus>;
  status_exclude?: OneOrMany<JobStatus>;
  type?: OneOrMany<string>;
  after?: Date;
  before?: Date;
}

export interface JobFilters extends JobWhere {
  /** Default id (newest first). */
  orderby?: JobOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /jobs/counts`: the list's, without paging, sort and the status ones. */
export type JobCountFilters = Omit<JobWhere, 'status' | 'status_exclude'>;

/** The WHERE of the job list and of its counts. */
export function jobWhere(f: JobWhere): ListWhere {
  return new ListWhere()
    .anyOf('status', f.status)
    .noneOf('status', f.status_exclude)
    .anyOf('type', f.type)
    .after('created_at', f.after)
    .before('created_at', f.before);
}

/** Who holds a job: every runner write is guarded by all three. */
export interface JobLease {
  id: number;
  owner: string;
  /** The job's `attempts` after this claim. */
  attempt: number;
}

/** A job as a runner receives it from `claim`. */
export interface ClaimedJob {
  lease: JobLease;
  type: string;
  params: Record<string, unknown>;
  /** The last checkpoint value (null when none was saved). */
  checkpoint: unknown;
  /** Progress as of that checkpoint (a resumed job counts on from here). */
  progress: JobProgress;
  /** True when the claim took over an expired lease (the previous process died). */
  takeover: boolean;
}

/** What a guarded write found: still ours, ours but cancel requested, or taken over. */
export type LeaseState = 'ok' | 'cancelling' | 'lost';

/** The checkpoint column holds the job's value and the progress counts saved with it. */
export interface CheckpointEnvelope {
  value: unknown;
  progress: JobProgress;
}

export const COLUMNS =
  'id, type, params, status, progress_total, progress_done, progress_failed, result, error, attempts, actor, created_at, started_at, finished_at, updated_at';

// biome-ignore lint/suspicious/noExplicitAny: stored JSON of a job type's own making, read back by that type.
export function parseJson(text: unknown): any {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(String(text));
  } catch {
    return null;
  }
}

const optionalInt = (v: unknown): number | null => (v === null || v === undefined ? null : toInt(v));

export function shapeJob(row: Record<string, unknown>): Job {
  return {
    id: toInt(row.id),
    type: String(row.type),
    params: parseJson(row.params) ?? {},
    status: row.status as JobStatus,
    progress: { total: optionalInt(row.progress_total), done: toInt(row.progress_done), failed: toInt(row.progress_failed) },
    result: parseJson(row.result),
    error: row.error === null || row.error === undefined ? null : String(row.error),
    attempts: toInt(row.attempts),
    actor: String(row.actor),
    created_at: toIso(row.created_at)!,
    started_at: toIso(row.started_at),
    finished_at: toIso(row.finished_at),
    updated_at: toIso(row.updated_at)!,
  };
}
