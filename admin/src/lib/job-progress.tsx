// Following a job (a sync, a bulk run): GET /jobs/{id} polled while it runs, a progress bar of
// done / total, its status in words for screen readers, a cancel button (DELETE /jobs/{id}), and
// what it reported once it ended. Any screen that starts a job shows it with this.
import { Button, Notice } from '@wordpress/components';
import { useEffect, useRef, useState } from 'react';
import { api, errorMessage } from './api';
import './job-progress.css';

/** A job as GET /jobs/{id} answers it. */
export interface Job {
  id: number;
  type: string;
  params: Record<string, unknown>;
  status: 'queued' | 'running' | 'cancelling' | 'cancelled' | 'done' | 'failed';
  progress: { total: number | null; done: number; failed: number } | null;
  result: unknown;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export const FINAL_JOB_STATUSES = ['cancelled', 'done', 'failed'];

export function isJobFinal(job: Pick<Job, 'status'>): boolean {
  return FINAL_JOB_STATUSES.includes(job.status);
}

/** A job's progress in a list row: a bar once the total is known, and its words ("40 / 100 (2 failed)", "12 so far"). */
export function JobProgressBar({ job }: { job: Pick<Job, 'id' | 'status' | 'progress'> }) {
  const { total = null, done = 0, failed = 0 } = job.progress ?? {};
  const words =
    job.status === 'queued' && done === 0
      ? 'waiting for a runner'
      : `${done}${total !== null ? ` / ${total}` : ' so far'}${failed ? ` (${failed} failed)` : ''}`;
  return (
    <span className="ct-job-progress">
      {total !== null && total > 0 ? <progress max={total} value={Math.min(done, total)} aria-label={`Job ${job.id} progress`} /> : null}
      <span>{words}</span>
    </span>
  );
}

const STATUS_WORDS: Record<Job['status'], string> = {
  queued: 'Waiting to start',
  running: 'Running',
  cancelling: 'Cancelling',
  cancelled: 'Cancelled',
  done: 'Done',
  failed: 'Failed',
};

/** The job followed until it ends; `onFinished` once when it does (e.g. to reload a list). */
export function JobProgress({
  job: initial,
  label,
  onFinished,
  interval = 500,
}: {
  job: Job;
  label: string;
  onFinished?: (job: Job) => void;
  interval?: number;
}) {
  const [job, setJob] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const finished = useRef(onFinished);
  finished.current = onFinished;
  const final = isJobFinal(job);

  // biome-ignore lint/correctness/useExhaustiveDependencies: one poll loop per job id.
  useEffect(() => {
    if (isJobFinal(initial)) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const tick = () => {
      api<Job>(`/jobs/${initial.id}`).then(
        (next) => {
          if (!live) return;
          setJob(next);
          setError(null);
          if (isJobFinal(next)) finished.current?.(next);
          else timer = setTimeout(tick, interval);
        },
        (err: unknown) => {
          if (!live) return;
          setError(errorMessage(err));
          timer = setTimeout(tick, interval * 4);
        },
      );
    };
    timer = setTimeout(tick, interval);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [initial.id]);

  const cancel = () => {
    setCancelling(true);
    api<Job>(`/jobs/${job.id}`, { method: 'DELETE' }).then(
      (next) => {
        setJob((j) => (isJobFinal(j) ? j : next));
        setCancelling(false);
      },
      (err: unknown) => {
        setError(errorMessage(err));
        setCancelling(false);
      },
    );
  };

  const total = job.progress?.total ?? null;
  const done = job.progress?.done ?? 0;
  const failedItems = job.progress?.failed ?? 0;
  const share = total ? Math.min(100, Math.round((done / total) * 100)) : job.status === 'done' ? 100 : 0;
  const counted = total !== null ? `${done} / ${total}` : `${done} so far`;
  return (
    <div className={`ct-job is-${job.status}`}>
      <div className="ct-job-head">
        <strong>{label}</strong>
        <span role="status" className="ct-job-status">
          {STATUS_WORDS[job.status]}: {counted}
          {failedItems ? `, ${failedItems} failed` : ''}
        </span>
        {!final ? (
          <Button
            __next40pxDefaultSize
            variant="secondary"
            size="compact"
            onClick={cancel}
            isBusy={cancelling}
            disabled={cancelling || job.status === 'cancelling'}
            accessibleWhenDisabled
          >
            Cancel
          </Button>
        ) : null}
      </div>
      <div
        className="ct-job-bar"
        role="progressbar"
        aria-label={`${label} progress`}
        aria-valuemin={0}
        aria-valuemax={total ?? 100}
        aria-valuenow={total ? done : share}
        aria-valuetext={counted}
      >
        <div className="ct-job-fill" style={{ width: `${share}%` }} />
      </div>
      {job.error ? (
        <Notice status="error" isDismissible={false}>
          {job.error}
        </Notice>
      ) : null}
      {error ? (
        <Notice status="warning" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      {final && job.result ? <JobResult result={job.result} /> : null}
    </div>
  );
}

/** The numbers a job reported (created, failed, ...), nested ones by key. */
function JobResult({ result }: { result: unknown }) {
  const flat: [string, string][] = [];
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') flat.push([path, String(value)]);
    else if (value && typeof value === 'object' && !Array.isArray(value) && path.split('.').length < 3)
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(result, '');
  if (!flat.length) return null;
  return (
    <dl className="ct-job-result">
      {flat.slice(0, 24).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
