// Schedules: when each periodic job fires next, its last run, and "Run now"
// (POST /schedules/{name}/run), whose answer says which job it queued or why it was skipped.
import { Button, Notice, Spinner, VisuallyHidden } from '@wordpress/components';
import { useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import type { ScreenProps } from '../screens';
import './content.css';

interface Run {
  id: number;
  schedule: string;
  network: string | null;
  slot: string;
  trigger: 'cron' | 'catch_up' | 'manual';
  status: 'queued' | 'skipped';
  job_id: number | null;
  job_status: string | null;
  reason: string | null;
  actor: string;
  created_at: string;
}

interface Schedule {
  name: string;
  job_type: string;
  description: string;
  available: boolean;
  cron: string;
  timezone: string;
  enabled: boolean;
  catch_up: boolean;
  per_network: boolean;
  next_due: string | null;
  last_run: Run | null;
  networks: { network: string; cron: string; timezone: string; enabled: boolean; next_due: string | null; last_run: Run | null }[] | null;
}

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';
}

function RunWords({ run }: { run: Run | null }) {
  if (!run) return <>never</>;
  const job = run.job_id ? <Link to="/jobs">job #{run.job_id}</Link> : null;
  return (
    <>
      {when(run.created_at)} ({run.trigger}): {run.status === 'queued' ? 'queued ' : 'skipped for '}
      {job}
      {run.job_status ? `, ${run.job_status}` : ''}
      {run.reason ? <span className="ct-aside"> {run.reason}</span> : null}
    </>
  );
}

export default function SchedulesScreen(_props: ScreenProps) {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<{ status: 'success' | 'warning' | 'error'; text: string } | null>(null);
  const load = useCallback(() => {
    api<Schedule[]>('/schedules').then(
      (s) => {
        setSchedules(s);
        setError(null);
      },
      (err: unknown) => setError(errorMessage(err)),
    );
  }, []);
  useEffect(load, [load]);
  const runNow = (s: Schedule) => {
    setBusy(s.name);
    setOutcome(null);
    api<Run[]>(`/schedules/${s.name}/run`, { method: 'POST', data: {} }).then(
      (runs) => {
        setBusy(null);
        if (runs.length === 0) setOutcome({ status: 'warning', text: `${s.name}: there is no network to run it for.` });
        else
          setOutcome({
            status: runs.every((r) => r.status === 'queued') ? 'success' : 'warning',
            text: runs
              .map(
                (r) =>
                  `${s.name}${r.network ? ` (${r.network})` : ''}: ${r.status === 'queued' ? `queued job #${r.job_id}` : `skipped, ${r.reason ?? 'the previous job is still under way'}`}`,
              )
              .join('; '),
          });
        load();
      },
      (err: unknown) => {
        setBusy(null);
        setOutcome({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  return (
    <>
      <h1>Schedules</h1>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      {outcome ? (
        <div role="status">
          <Notice status={outcome.status} onRemove={() => setOutcome(null)}>
            {outcome.text}
          </Notice>
        </div>
      ) : null}
      {schedules === null && !error ? <Spinner /> : null}
      {schedules ? (
        <div className="ct-panel">
          <table className="ct-table">
            <caption>
              <VisuallyHidden>Schedules</VisuallyHidden>
            </caption>
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">When</th>
                <th scope="col">Next run</th>
                <th scope="col">Last run</th>
                <th scope="col">
                  <VisuallyHidden>Actions</VisuallyHidden>
                </th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => (
                <tr key={s.name}>
                  <td>
                    <strong>{s.name}</strong>
                    <div className="ct-aside">
                      {s.description} ({s.job_type}){s.available ? '' : ': not available in this version'}
                    </div>
                  </td>
                  <td>
                    <code>{s.cron}</code> {s.timezone}
                    <div className="ct-aside">
                      {s.enabled ? 'enabled' : 'disabled'}
                      {s.catch_up ? ', catches up' : ''}
                      {s.per_network ? ', per network' : ''}
                    </div>
                  </td>
                  <td>
                    {s.enabled ? when(s.next_due) : 'does not fire'}
                    {s.networks?.length ? (
                      <ul className="ct-counts">
                        {s.networks.map((n) => (
                          <li key={n.network} className="ct-aside">
                            {n.network}: {when(n.next_due)}
                          </li>
                        ))}
                      </ul>
                    ) : null}
                  </td>
                  <td>
                    <RunWords run={s.last_run} />
                  </td>
                  <td>
                    <Button
                      variant="secondary"
                      onClick={() => runNow(s)}
                      isBusy={busy === s.name}
                      disabled={busy !== null || !s.available}
                      accessibleWhenDisabled
                    >
                      Run now<VisuallyHidden> {s.name}</VisuallyHidden>
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
