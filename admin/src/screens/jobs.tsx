// Jobs: every long run (syncs, polls, bulk pages, logos and AI, maintenance) with its live
// progress, the views row by status, and cancel (DELETE /jobs/{id}) for those not yet final.
import type { Action, Field } from '@wordpress/dataviews';
import { useEffect, useMemo, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { BulkActionModal } from '../lib/bulk';
import { isJobFinal, type Job, JobProgressBar } from '../lib/job-progress';
import { ListView, type ListSpec, useListData } from '../lib/list';
import type { ScreenProps } from '../screens';
import './content.css';

const STATUSES = [
  { value: 'queued', label: 'Queued' },
  { value: 'running', label: 'Running' },
  { value: 'cancelling', label: 'Cancelling' },
  { value: 'done', label: 'Done' },
  { value: 'failed', label: 'Failed' },
  { value: 'cancelled', label: 'Cancelled' },
];

const TYPES = ['advertisers.sync', 'orders.poll', 'coupons.refresh', 'pages.bulk', 'logos.bulk', 'ai.bulk', 'maintenance.prune'].map((t) => ({
  value: t,
  label: t,
}));

const fields: Field<Job>[] = [
  { id: 'id', label: 'Job', type: 'integer', enableHiding: false, render: ({ item }) => <>#{item.id}</> },
  { id: 'type', label: 'Type', elements: TYPES, filterBy: { operators: ['isAny'] } },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  { id: 'progress', label: 'Progress', enableSorting: false, render: ({ item }) => <JobProgressBar job={item} /> },
  {
    id: 'error',
    label: 'Outcome',
    enableSorting: false,
    render: ({ item }) =>
      item.error ? <span className="ct-negative">{item.error}</span> : item.result ? <code>{JSON.stringify(item.result).slice(0, 120)}</code> : null,
  },
  { id: 'actor', label: 'Started by', enableSorting: false },
  { id: 'created_at', label: 'Queued', type: 'datetime' },
  { id: 'finished_at', label: 'Finished', type: 'datetime' },
];

const spec: ListSpec<Job> = {
  screen: '/jobs',
  path: '/jobs',
  fields,
  columns: ['id', 'type', 'status', 'progress', 'error', 'actor', 'created_at', 'finished_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'type', kind: 'any' },
  ],
  dateField: 'created_at',
  views: { param: 'status', values: STATUSES, countsPath: '/jobs/counts' },
};

export default function JobsScreen({ query }: ScreenProps) {
  const list = useListData(spec, query);
  const [cancelling, setCancelling] = useState<Job | null>(null);
  const [bulk, setBulk] = useState<Job[] | null>(null);
  const withActions = useMemo<ListSpec<Job>>(() => {
    const cancel: Action<Job> = {
      id: 'cancel',
      label: (items) => (items.length > 1 ? 'Cancel jobs' : 'Cancel'),
      isEligible: (job) => !isJobFinal(job) && job.status !== 'cancelling',
      supportsBulk: true,
      callback: (items) => (items.length > 1 ? setBulk(items) : setCancelling(items[0] ?? null)),
    };
    return { ...spec, actions: [cancel] };
  }, []);
  // While any job on screen is under way, the page follows it.
  const live = list.items.some((job) => !isJobFinal(job));
  const { reload } = list;
  useEffect(() => {
    if (!live) return;
    const timer = window.setInterval(reload, 2000);
    return () => window.clearInterval(timer);
  }, [live, reload]);
  return (
    <>
      <h1>Jobs</h1>
      <ListView spec={withActions} query={query} list={list} />
      {cancelling ? (
        <ActionModal<Job>
          title={`Cancel job #${cancelling.id}?`}
          submitLabel="Cancel the job"
          destructive
          request={() => ({ path: `/jobs/${cancelling.id}`, method: 'DELETE' })}
          onDone={() => {
            setCancelling(null);
            reload();
          }}
          onClose={() => setCancelling(null)}
        >
          <p>A queued job is cancelled at once; a running {cancelling.type} stops at its next checkpoint. What it finished stays.</p>
        </ActionModal>
      ) : null}
      {bulk ? (
        <BulkActionModal<Job>
          title={`Cancel ${bulk.length} jobs?`}
          items={bulk}
          name={(job) => `Job #${job.id} (${job.type})`}
          request={(job) => ({ path: `/jobs/${job.id}`, method: 'DELETE' })}
          submitLabel={`Cancel ${bulk.length} jobs`}
          doneLabel="cancelled, or stopping at its next checkpoint"
          destructive
          onFinished={reload}
          onClose={() => setBulk(null)}
        >
          <p>Queued jobs are cancelled at once; running ones stop at their next checkpoint. What they finished stays.</p>
        </BulkActionModal>
      ) : null}
    </>
  );
}
