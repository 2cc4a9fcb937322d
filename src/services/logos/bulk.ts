// The bulk logo run (`logos.bulk` job): every advertiser in scope (a network, a status; without
// `force` only those with no logo), walked by row id in batches. Advertisers of a batch are fetched
// `concurrency` at once, and requests to one host are held to `per_host` at once (many logos live
// on one network CDN). A failed advertiser is counted and sampled, never fatal. After each batch
// the last id and the counts are the checkpoint, so a resumed run redoes at most one batch.
import type { Config } from '../../config/index.js';
import { ServiceError } from '../../errors.js';
import type { AdvertiserService, AdvertiserStatus, LogoTarget } from '../advertisers/index.js';
import type { Job, JobHandle, JobService } from '../jobs/index.js';
import type { MediaService } from '../media/index.js';
import type { NetworkService } from '../networks/index.js';
import { HostLimiter } from './host-limiter.js';
import type { LogoService } from './index.js';

export const LOGOS_BULK_JOB = 'logos.bulk';

export interface LogoBulkParams {
  network?: string;
  status?: AdvertiserStatus;
  force: boolean;
}

export interface LogoBulkCounts {
  /** Logos fetched and set. */
  fetched: number;
  /** Advertisers that had a logo already (set meanwhile, without `force`). */
  unchanged: number;
  failed: number;
  /** The first failures (at most FAILURE_SAMPLES): who, and the error code and message. */
  failures: { module: string; advertiser: string; code: string; message: string }[];
}

interface Checkpoint extends LogoBulkCounts {
  /** Row id of the last advertiser of the last finished batch. */
  after: number;
}

export interface LogoBulkState {
  /** The latest bulk run (running or finished), or null. */
  job: Job | null;
  /** Active advertisers, and how many have a local logo and how many lack one. */
  advertisers: { total: number; with_logo: number; without_logo: number };
  /** Stored media files and their total size. */
  media: { files: number; bytes: number };
}

export interface LogoBulkDeps {
  logos: LogoService;
  advertisers: AdvertiserService;
  media: MediaService;
  jobs: Pick<JobService, 'enqueue' | 'list' | 'cancelActiveOfType'>;
  networks: Pick<NetworkService, 'module'>;
  limits: Config['logos'];
}

const BATCH = 100;
const FAILURE_SAMPLES = 20;
const ACTIVE = new Set(['queued', 'running', 'cancelling']);

/** Starts, shows, cancels and runs the bulk logo fetch. */
export class LogoBulkService {
  constructor(private readonly deps: LogoBulkDeps) {}

  private async latest(): Promise<Job | null> {
    const { items } = await this.deps.jobs.list({ type: LOGOS_BULK_JOB, page: 1, per_page: 1 });
    return items[0] ?? null;
  }

  /** The latest run with its progress, and the active advertisers with and without a logo. */
  async state(): Promise<LogoBulkState> {
    const [job, advertisers, media] = await Promise.all([this.latest(), this.deps.advertisers.logoCounts({ status: 'active' }), this.deps.media.totals()]);
    return { job, advertisers, media };
  }

  /**
   * Queues a run (202 with the job). One run at a time, whatever its filters: 409
   * svc_job_already_running naming the queued or running one; 404 svc_network_not_found for an
   * unknown network.
   */
  async start(params: LogoBulkParams, actor: string): Promise<Job> {
    if (params.network !== undefined) await this.deps.networks.module(params.network);
    const running = await this.latest();
    if (running && ACTIVE.has(running.status)) {
      throw new ServiceError('svc_job_already_running', `A ${LOGOS_BULK_JOB} job is already ${running.status} (job ${running.id}).`, 409, { job: running });
    }
    return this.deps.jobs.enqueue(LOGOS_BULK_JOB, params, actor, { unique: true });
  }

  /** Cancels the queued or running run; 409 svc_job_not_running when there is none. */
  cancel(actor: string): Promise<Job> {
    return this.deps.jobs.cancelActiveOfType(LOGOS_BULK_JOB, actor);
  }

  /** The job's work (src/jobs/types/logos-bulk.ts). */
  async run(job: JobHandle<LogoBulkParams>): Promise<Record<string, unknown>> {
    const { advertisers, logos, limits } = this.deps;
    const { force, network, status } = job.params;
    const saved = job.checkpoint as Checkpoint | null;
    const state: Checkpoint = saved ? { ...saved, failures: [...saved.failures] } : { after: 0, fetched: 0, unchanged: 0, failed: 0, failures: [] };
    const scope = { network, status, missing: !force };
    const limiter = new HostLimiter(limits.per_host);
    const actor = `job:${job.id}`;
    let first = true;
    for (;;) {
      job.throwIfStopped();
      const { items, left } = await advertisers.logoBatch(scope, state.after, BATCH);
      if (first) {
        job.setTotal(job.counts().done + left);
        first = false;
      }
      if (items.length === 0) break;
      await pool(items, limits.concurrency, async (item: LogoTarget) => {
        try {
          const result = await logos.fetch(item.module, item.advertiser, { force, actor, signal: job.signal, limiter });
          if (result.fetched) state.fetched++;
          else state.unchanged++;
          job.progress({ done: 1 });
        } catch (err) {
          if (job.signal.aborted) throw err;
          state.failed++;
          // Only a service error's own message is shown (GET /jobs); anything else may carry SQL or a driver's words: logged instead.
          if (!(err instanceof ServiceError))
            job.log('error', 'Logo fetch failed on an internal error', {
              module: item.module,
              advertiser: item.advertiser,
              error: err instanceof Error ? err.message : String(err),
            });
          if (state.failures.length < FAILURE_SAMPLES) {
            const [code, message] =
              err instanceof ServiceError
                ? [err.code, err.message.slice(0, 300)]
                : ['svc_internal_error', 'The logo fetch stopped on an internal error; the log has the details.'];
            state.failures.push({ module: item.module, advertiser: item.advertiser, code, message });
          }
          job.progress({ done: 1, failed: 1 });
        }
      });
      state.after = items[items.length - 1].id;
      await job.saveCheckpoint(state);
    }
    const { after: _after, ...counts } = state;
    return { ...counts };
  }
}

/** Runs `work` on every item, `size` at once; waits for all, then throws the first error if any. */
async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(size, items.length) }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}
