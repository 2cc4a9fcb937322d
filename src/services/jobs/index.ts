// Persisted jobs: enqueue, list, cancel, and the claim/heartbeat/finish protocol the runner uses.
// A claimed job holds a lease (owner + expiry) renewed by heartbeats. Every write a runner makes
// is guarded by its lease (`lease_owner` and `attempts`, which a claim increments), so a process
// that lost its lease can no longer touch the row. A job whose lease expired (its process died)
// is claimed again and resumes from its checkpoint. Claims lock rows: SELECT ... FOR UPDATE SKIP
// LOCKED on MariaDB/MySQL; on SQLite the write transaction is exclusive already.
import type { Transaction } from '../../db/transaction.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countByStatus, orderClause, pageClause, type StatusCounts } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { requestHash } from '../idempotency/index.js';
import type { LogService } from '../logs/index.js';
import type { SecretValues } from '../../secret-values.js';
import type { WebhookEvents } from '../webhooks/index.js';
import { HOOKS } from '../../hooks/index.js';
import {
  boundedProgress,
  COLUMNS,
  parseJson,
  shapeJob,
  type CheckpointEnvelope,
  type ClaimedJob,
  type Job,
  type JobFilters,
  type JobCountFilters,
  JOB_ORDERBY,
  JOB_STATUSES,
  jobWhere,
  type JobLease,
  type JobProgress,
  type JobProgressUpdate,
  type LeaseState,
} from './rows.js';
import type { JobCatalog } from './catalog.js';

// The shapes are part of this service's API.
export * from './rows.js';
export type { JobCatalog, JobTypeInfo } from './catalog.js';
export { JobStopped, type JobHandle, type JobStopReason } from './handle.js';

export interface JobServiceDeps<C extends JobCatalog = JobCatalog> {
  db: Database;
  clock: Clock;
  logger: LogService;
  /** The job types this process knows (src/jobs/registry.ts). */
  registry: C;
  /** A job started this many times whose last process died is failed instead of run again. */
  maxAttempts?: number;
  /** Secret values scrubbed from a job's error and result before they are stored (GET /jobs shows both). */
  secrets?: SecretValues;
  /** The outbox: job.finished goes to webhooks with the job's last state (absent in job test benches). */
  events?: WebhookEvents;
}

const MAX_ERROR_CHARS = 2000;

/** Enqueues, lists and cancels jobs, and hands them to runners under a lease. `C`: the catalog's own type, which the runtime reads back. */
export class JobService<C extends JobCatalog = JobCatalog> {
  readonly registry: C;
  private readonly enqueueListeners = new Set<(job: Job) => void>();
  private readonly cancelListeners = new Set<(id: number) => void>();
  private readonly progressListeners = new Set<(update: JobProgressUpdate) => void>();

  constructor(private readonly deps: JobServiceDeps<C>) {
    this.registry = deps.registry;
  }

  /** Called after each enqueue in this process (the runner wakes up instead of waiting to poll). */
  onEnqueued(listener: (job: Job) => void): () => void {
    this.enqueueListeners.add(listener);
    return () => this.enqueueListeners.delete(listener);
  }

  /** Called when this process asks a running job to stop (other processes see it on their next write). */
  onCancelRequested(listener: (id: number) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  /**
   * Called after each progress or checkpoint write a runner in this process makes (the CLI's
   * progress line for a job it runs in-process). Listeners must not throw or block.
   */
  onProgress(listener: (update: JobProgressUpdate) => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  /**
   * Queues a job. 400 svc_unknown_job_type / svc_invalid_job_params. With `unique`, a job of the
   * same type and params that is queued, running or cancelling makes this 409
   * svc_job_already_running with that job in `data.job`. Params are shown by GET /jobs: never put
   * a secret in them. With `transaction`, the job is queued only if that transaction commits.
   * `unique: 'type'` allows one active job of the type whatever its params (a bulk run over every
   * advertiser: a second one with other filters would race the first over the same rows).
   */
  async enqueue(type: string, params: unknown, actor: string, options: { unique?: boolean | 'type'; transaction?: Transaction } = {}): Promise<Job> {
    const valid = this.registry.validateParams(type, params);
    const hash = requestHash({ type, params: valid });
    const uniqueKey = options.unique === 'type' ? requestHash({ type }) : hash;
    const { db, clock } = this.deps;
    const t = options.transaction;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (options.unique) {
        const running = options.unique === 'type' ? await this.activeOfType(type, t) : await this.findActive(hash, t);
        if (running) throw this.alreadyRunning(running, options.unique === 'type');
      }
      const now = clock.now();
      try {
        const { insertId } = await db.execute(
          "INSERT INTO jobs (type, params, params_hash, unique_key, status, progress_done, progress_failed, attempts, actor, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', 0, 0, 0, ?, ?, ?)",
          [type, JSON.stringify(valid), hash, options.unique ? uniqueKey : null, actor.slice(0, 64), now, now],
          t,
        );
        const job = await this.fetch(insertId!, t);
        this.deps.logger.info('jobs', `Job ${job.id} (${type}) queued`, { job_id: job.id, type, actor });
        for (const listener of this.enqueueListeners) {
          try {
            listener(job);
          } catch {
            // A listener's failure is not the enqueuer's.
          }
        }
        return job;
      } catch (err) {
        // Another unique enqueue of the same job won the race: answer with its job.
        if (!options.unique || !isUniqueViolation(err)) throw err;
      }
    }
    const running = options.unique === 'type' ? await this.activeOfType(type, t) : await this.findActive(hash, t);
    if (running) throw this.alreadyRunning(running, options.unique === 'type');
    throw new ServiceError('svc_database_busy', 'The database is busy. Retry shortly.', 503, { retry_after: 1 }, { 'Retry-After': '1' });
  }

  private async findActive(hash: string, t?: Transaction): Promise<Job | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM jobs WHERE params_hash = ? AND status IN ('queued', 'running', 'cancelling') ORDER BY id LIMIT 1`,
      [hash],
      t,
    );
    return row ? shapeJob(row) : null;
  }

  /** The oldest job of `type` that is queued, running or cancelling, or null. */
  async activeOfType(type: string, t?: Transaction): Promise<Job | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM jobs WHERE type = ? AND status IN ('queued', 'running', 'cancelling') ORDER BY id LIMIT 1`,
      [type],
      t,
    );
    return row ? shapeJob(row) : null;
  }

  private async fetch(id: number, t?: Transaction): Promise<Job> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`, [id], t);
    if (!row) throw new ServiceError('svc_job_not_found', 'Job not found.', 404);
    return shapeJob(row);
  }

  private alreadyRunning(job: Job, anyParams = false): ServiceError {
    return new ServiceError(
      'svc_job_already_running',
      `A ${job.type} job${anyParams ? '' : ' with these parameters'} is already ${job.status} (job ${job.id}).`,
      409,
      { job },
    );
  }

  /** One job; 404 svc_job_not_found. */
  get(id: number): Promise<Job> {
    return this.fetch(id);
  }

  /** Newest first, filtered and paged. */
  async list(filters: JobFilters): Promise<{ items: Job[]; total: number }> {
    const where = jobWhere(filters);
    const order = orderClause(JOB_ORDERBY, filters, 'id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM jobs ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM jobs ${where.sql}`, where.params),
    ]);
    return { items: rows.map(shapeJob), total: toInt(count[0].n) };
  }

  /** The views row of the list: jobs per status (every status, 0 included) under the list's other filters. */
  counts(filters: JobCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'jobs', 'status', jobWhere(filters), JOB_STATUSES);
  }

  /**
   * Cancels a job: a queued one is `cancelled` at once; a running one becomes `cancelling` and its
   * runner stops it at its next checkpoint (then `cancelled`). Cancelling twice is harmless.
   * A finished job is 409 svc_job_finished.
   */
  /** At a member's erasure, in `t`: their words replaced in jobs' parameters, results and errors. */
  eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return replaceInColumns(this.deps.db, t, { table: 'jobs', key: 'id', columns: ['params', 'result', 'error', 'checkpoint'] }, replacements);
  }

  async cancel(id: number, actor: string): Promise<Job> {
    const { db, clock, logger } = this.deps;
    for (let attempt = 0; attempt < 5; attempt++) {
      const job = await this.get(id);
      const now = clock.now();
      if (job.status === 'cancelling') return job;
      if (job.status === 'queued') {
        const { affected } = await db.execute(
          "UPDATE jobs SET status = 'cancelled', unique_key = NULL, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued'",
          [now, now, id],
        );
        if (affected === 1) {
          logger.info('jobs', `Job ${id} (${job.type}) cancelled before it started`, { job_id: id, type: job.type, actor });
          return this.get(id);
        }
      } else if (job.status === 'running') {
        const { affected } = await db.execute("UPDATE jobs SET status = 'cancelling', updated_at = ? WHERE id = ? AND status = 'running'", [now, id]);
        if (affected === 1) {
          logger.info('jobs', `Job ${id} (${job.type}) asked to stop`, { job_id: id, type: job.type, actor });
          for (const listener of this.cancelListeners) {
            try {
              listener(id);
            } catch {
              // The runner also sees the status on its next write.
            }
          }
          return this.get(id);
        }
      } else {
        throw new ServiceError('svc_job_finished', `Job ${id} is already ${job.status}.`, 409, { job_status: job.status });
      }
      // The job changed between the read and the update (claimed, finished): look again.
    }
    throw new ServiceError('svc_database_busy', 'The job keeps changing. Retry shortly.', 503, { retry_after: 1 }, { 'Retry-After': '1' });
  }

  /**
   * Cancels the queued or running job of a one-at-a-time `type` (a bulk run's DELETE). 409
   * svc_job_not_running, with the latest job of the type, when there is none, also when the job
   * finished between the look and the cancel: for the caller that is the same state, and the
   * route's documented answer, never the per-job svc_job_finished.
   */
  async cancelActiveOfType(type: string, actor: string): Promise<Job> {
    const notRunning = async () =>
      new ServiceError('svc_job_not_running', `No ${type} job is queued or running.`, 409, {
        type,
        job: (await this.list({ type, page: 1, per_page: 1 })).items[0] ?? null,
      });
    const job = await this.activeOfType(type);
    if (!job) throw await notRunning();
    try {
      return await this.cancel(job.id, actor);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'svc_job_finished') throw await notRunning();
      throw err;
    }
  }

  /**
   * Takes the next job of one of `types` for `owner`, or null: first a running job whose lease
   * expired (its process died; it resumes from its checkpoint), else the oldest queued job.
   * An expired `cancelling` job is settled as `cancelled`, and one started `maxAttempts` times is
   * settled as `failed`, instead of being run again.
   */
  async claim(owner: string, types: readonly string[], leaseMs: number): Promise<ClaimedJob | null> {
    if (types.length === 0) return null;
    const { db, clock } = this.deps;
    const maxAttempts = this.deps.maxAttempts ?? 5;
    // Locked rows belong to another claimer's transaction: skip them rather than wait.
    const lock = db.forUpdate({ skipLocked: true });
    const inTypes = types.map(() => '?').join(', ');
    const columns = 'id, type, params, status, attempts, checkpoint';
    // Each round either claims a job, finds none, or settles one dead job and looks again.
    for (let round = 0; round < 20; round++) {
      const outcome = await db.transaction(async (t): Promise<ClaimedJob | 'none' | 'settled'> => {
        const now = clock.now();
        let takeover = true;
        let [row] = await db.select<Record<string, unknown>>(
          `SELECT ${columns} FROM jobs WHERE status IN ('running', 'cancelling') AND lease_expires_at < ? AND type IN (${inTypes}) ORDER BY id LIMIT 1${lock}`,
          [now, ...types],
          t,
        );
        if (!row) {
          takeover = false;
          [row] = await db.select<Record<string, unknown>>(
            `SELECT ${columns} FROM jobs WHERE status = 'queued' AND type IN (${inTypes}) ORDER BY id LIMIT 1${lock}`,
            [...types],
            t,
          );
          if (!row) return 'none';
        }
        const id = toInt(row.id);
        const attempts = toInt(row.attempts);
        const status = String(row.status);
        if (takeover && (status === 'cancelling' || attempts >= maxAttempts)) {
          const [final, error] =
            status === 'cancelling'
              ? ['cancelled', null]
              : ['failed', `The job was started ${attempts} times and its process stopped each time before it finished.`];
          await db.execute(
            'UPDATE jobs SET status = ?, error = ?, unique_key = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ? WHERE id = ? AND status = ? AND attempts = ?',
            [final, error, now, now, id, status, attempts],
            t,
          );
          this.deps.logger.warning('jobs', `Job ${id} (${String(row.type)}) ${final}: its process stopped without finishing it`, {
            job_id: id,
            type: row.type,
            attempts,
          });
          return 'settled';
        }
        const envelope = parseJson(row.checkpoint) as CheckpointEnvelope | null;
        const progress: JobProgress = envelope?.progress ?? { total: null, done: 0, failed: 0 };
        const attempt = attempts + 1;
        // Guarded by what was read; `attempts` changes on every claim, so a MariaDB transaction
        // (which counts changed rows only) always sees its own update. On Galera, locks are per
        // node: runners on two nodes can both get here for one job, and the second to commit fails
        // certification (ER_LOCK_DEADLOCK); the transaction runs again and finds the job taken.
        const { affected } = await db.execute(
          `UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires_at = ?, heartbeat_at = ?, attempts = ?, progress_total = ?, progress_done = ?, progress_failed = ?,
             started_at = COALESCE(started_at, ?), updated_at = ? WHERE id = ? AND status = ? AND attempts = ?`,
          [owner, new Date(now.getTime() + leaseMs), now, attempt, progress.total, progress.done, progress.failed, now, now, id, status, attempts],
          t,
        );
        if (affected !== 1) return 'settled';
        return {
          lease: { id, owner, attempt },
          type: String(row.type),
          params: parseJson(row.params) ?? {},
          checkpoint: envelope ? envelope.value : null,
          progress,
          takeover,
        };
      });
      if (outcome === 'none') return null;
      if (outcome !== 'settled') {
        if (outcome.takeover)
          this.deps.logger.warning('jobs', `Job ${outcome.lease.id} (${outcome.type}) taken over: its lease expired`, {
            job_id: outcome.lease.id,
            type: outcome.type,
            attempt: outcome.lease.attempt,
            owner,
          });
        return outcome;
      }
    }
    return null;
  }

  /**
   * An UPDATE guarded by the lease. The common case (still running) is one statement; when it
   * matches nothing, a read tells a cancel request (the write is then made under `cancelling`)
   * from a lost lease.
   */
  private async guarded(lease: JobLease, set: string, values: unknown[], cancelling: boolean): Promise<LeaseState> {
    const { db } = this.deps;
    const sql = `UPDATE jobs SET ${set} WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = ?`;
    const run = (status: string) => db.execute(sql, [...values, lease.id, lease.owner, lease.attempt, status]);
    if ((await run(cancelling ? 'cancelling' : 'running')).affected === 1) return cancelling ? 'cancelling' : 'ok';
    const [row] = await db.select<Record<string, unknown>>('SELECT status, lease_owner, attempts FROM jobs WHERE id = ?', [lease.id]);
    if (!row || row.lease_owner !== lease.owner || toInt(row.attempts) !== lease.attempt) return 'lost';
    if (row.status === 'cancelling' && !cancelling) return (await run('cancelling')).affected === 1 ? 'cancelling' : 'lost';
    return 'lost';
  }

  /** Extends the lease; tells whether the job was asked to stop or was taken over. */
  async heartbeat(lease: JobLease, leaseMs: number, cancelling = false): Promise<LeaseState> {
    const now = this.deps.clock.now();
    return this.guarded(lease, 'lease_expires_at = ?, heartbeat_at = ?', [new Date(now.getTime() + leaseMs), now], cancelling);
  }

  /** Writes progress, and with `checkpoint` the checkpoint saved with that progress. */
  async saveProgress(lease: JobLease, counts: JobProgress, cancelling = false, checkpoint?: { value: unknown }): Promise<LeaseState> {
    const progress = boundedProgress(counts);
    const values: unknown[] = [progress.total, progress.done, progress.failed, this.deps.clock.now()];
    let set = 'progress_total = ?, progress_done = ?, progress_failed = ?, updated_at = ?';
    if (checkpoint) {
      set += ', checkpoint = ?';
      values.push(JSON.stringify({ value: checkpoint.value ?? null, progress } satisfies CheckpointEnvelope));
    }
    const state = await this.guarded(lease, set, values, cancelling);
    if (state !== 'lost' && this.progressListeners.size) {
      const update: JobProgressUpdate = { id: lease.id, progress: { ...progress }, ...(checkpoint ? { checkpoint: checkpoint.value ?? null } : {}) };
      for (const listener of this.progressListeners) {
        try {
          listener(update);
        } catch {
          // A display's failure is not the job's.
        }
      }
    }
    return state;
  }

  /** The job returned: `done`, or `cancelled` when a cancel was requested meanwhile. */
  async finish(lease: JobLease, result: Record<string, unknown>, progress: JobProgress): Promise<LeaseState> {
    const safe = this.deps.secrets ? this.deps.secrets.scrubDeep(result ?? {}) : (result ?? {});
    return this.settle(lease, "CASE WHEN status = 'cancelling' THEN 'cancelled' ELSE 'done' END", { result: JSON.stringify(safe), progress });
  }

  /** The job threw: `failed` with `message` (shown to clients, so never a stack). */
  async fail(lease: JobLease, message: string, progress: JobProgress): Promise<LeaseState> {
    const safe = this.deps.secrets ? this.deps.secrets.scrub(message) : message;
    return this.settle(lease, "'failed'", { error: safe.slice(0, MAX_ERROR_CHARS), progress });
  }

  /** The job stopped because it was cancelled. */
  async markCancelled(lease: JobLease, progress: JobProgress): Promise<LeaseState> {
    return this.settle(lease, "'cancelled'", { progress });
  }

  private async settle(lease: JobLease, statusSql: string, fields: { result?: string; error?: string; progress: JobProgress }): Promise<LeaseState> {
    const now = this.deps.clock.now();
    const progress = boundedProgress(fields.progress);
    const { db, events } = this.deps;
    return db.transaction<LeaseState>(async (t) => {
      const { affected } = await db.execute(
        // `status` is assigned last: MariaDB evaluates assignments left to right.
        `UPDATE jobs SET result = ?, error = ?, progress_total = ?, progress_done = ?, progress_failed = ?, unique_key = NULL, lease_expires_at = NULL,
           finished_at = ?, updated_at = ?, status = ${statusSql} WHERE id = ? AND lease_owner = ? AND attempts = ? AND status IN ('running', 'cancelling')`,
        [fields.result ?? null, fields.error ?? null, progress.total, progress.done, progress.failed, now, now, lease.id, lease.owner, lease.attempt],
        t,
      );
      if (affected !== 1) return 'lost';
      // The job's webhooks are written with its end, so a crash right after cannot lose them.
      if (events) await events.emit(t, HOOKS.jobFinished, await this.fetch(lease.id, t));
      return 'ok';
    });
  }

  /**
   * Gives a job back (its process is shutting down): `queued` again, without a lease, so any
   * runner resumes it from its checkpoint at once; a job being cancelled is `cancelled` instead.
   */
  async release(lease: JobLease, counts: JobProgress): Promise<LeaseState> {
    const progress = boundedProgress(counts);
    const now = this.deps.clock.now();
    const { affected } = await this.deps.db.execute(
      `UPDATE jobs SET progress_total = ?, progress_done = ?, progress_failed = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?,
         finished_at = CASE WHEN status = 'cancelling' THEN ? ELSE NULL END,
         unique_key = CASE WHEN status = 'cancelling' THEN NULL ELSE unique_key END,
         status = CASE WHEN status = 'cancelling' THEN 'cancelled' ELSE 'queued' END
       WHERE id = ? AND lease_owner = ? AND attempts = ? AND status IN ('running', 'cancelling')`,
      [progress.total, progress.done, progress.failed, now, now, lease.id, lease.owner, lease.attempt],
    );
    return affected === 1 ? 'ok' : 'lost';
  }

  /** Deletes finished jobs older than `retentionDays`; returns how many. */
  async prune(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - retentionDays * 86_400_000);
    const { affected } = await this.deps.db.execute("DELETE FROM jobs WHERE status IN ('done', 'failed', 'cancelled') AND finished_at < ?", [cutoff]);
    return affected;
  }
}
