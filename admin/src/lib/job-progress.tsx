// A job followed live: GET /jobs/{id} every second while it is not final, its progress as
// `done / total` (a bar once the total is known), and a cancel button (DELETE /jobs/{id}).
import { Button, Notice } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { api, errorMessage } from './api';

export interface Job {
  id: number;
  type: string;
  params: Record<string, unknown>;
  status: 'queued' | 'running' | 'cancelling' | 'cancelled' | 'done' | 'failed';
  progress: { total: number | null; done: number; failed: number };
  result: unknown;
  error: string | null;
  attempts: number;
  actor: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export const FINAL_JOB_STATUSES = ['cancelled', 'done', 'failed'];

export function isJobFinal(job: Pick<Job, 'status'>): boolean {
  return FINAL_JOB_STATUSES.includes(job.status);
}

/** The progress bar and its words: "40 / 100 (2 failed)", or "12 so far" while the total is unknown. */
export function JobProgressBar({ job }: { job: Pick<Job, 'id' | 'status' | 'progress'> }) {
  const { total, done, failed } = job.progress;
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

/** One job, followed until it ends; `onFinished` is told once it is final. */
export function JobProgress({ job: first, onFinished }: { job: Job; onFinished?: (job: Job) => void }) {
  const [job, setJob] = useState(first);
  const [error, setError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const final = isJobFinal(job);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the job's id and whether it ended decide the polling.
  useEffect(() => {
    if (final) {
      onFinished?.(job);
      return;
    }
    const timer = window.setInterval(() => {
      api<Job>(`/jobs/${job.id}`).then(setJob, (err: unknown) => setError(errorMessage(err)));
    }, 1000);
    return () => window.clearInterval(timer);
  }, [job.id, final]);
  const cancel = () => {
    setCancelling(true);
    api<Job>(`/jobs/${job.id}`, { method: 'DELETE' }).then(
      (next) => {
        setJob(next);
        setCancelling(false);
      },
      (err: unknown) => {
        setError(errorMessage(err));
        setCancelling(false);
      },
    );
  };
  return (
    <div className="ct-job" aria-live="polite">
      <span>
        Job #{job.id} ({job.type}): <strong>{job.status}</strong>
      </span>
      <JobProgressBar job={job} />
      {job.error ? <span className="ct-negative">{job.error}</span> : null}
      {!final && job.status !== 'cancelling' ? (
        <Button variant="secondary" size="compact" onClick={cancel} isBusy={cancelling} disabled={cancelling} accessibleWhenDisabled>
          Cancel job
        </Button>
      ) : null}
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
    </div>
  );
}
