// A network's health (GET /networks/{id}/health): the intake watchdog's state and why, what its
// baseline expects this hour beside what came in over the last hour, its syncs and polls, and the
// last alarm. Read-only: the watchdog job sets the state.
import { Card, CardBody, CardHeader, Notice, Spinner } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';

type StallReason =
  | { kind: 'intake_low'; observed: number; expected: number; window_minutes: number; probability: number }
  | { kind: 'run_overdue'; run: string; last_ok_at: string; allowed_minutes: number }
  | { kind: 'auth_failing'; run: string; failures: number };

export interface NetworkHealth {
  network: string;
  state: 'ok' | 'stalled' | 'unknown';
  reasons: StallReason[];
  stalled_since: string | null;
  recovered_at: string | null;
  enough_history: boolean;
  checked_at: string | null;
  last_alarm: { at: string; reasons: StallReason[] } | null;
  baseline: { expected_this_hour: number; events: number; span_days: number; min_history_days: number; min_history_events: number };
  last_hour: { observed: number; expected: number };
  window: { minutes: number; observed: number; expected: number };
  runs: { run: string; ok_at: string | null; auth_failures: number; allowed_minutes: number | null }[];
}

const RUN_NAMES: Record<string, string> = { orders: 'Order poll', advertisers: 'Advertiser sync', coupons: 'Coupon refresh' };

/** One reason in words. */
export function reasonText(r: StallReason): string {
  if (r.kind === 'intake_low') return `Intake far below normal: ${r.observed} in the last ${r.window_minutes} minutes, ${r.expected} expected`;
  if (r.kind === 'run_overdue')
    return `${RUN_NAMES[r.run] ?? r.run} has not succeeded since ${r.last_ok_at} (its schedule allows ${r.allowed_minutes} minutes)`;
  return `${RUN_NAMES[r.run] ?? r.run}: the network refused the credentials ${r.failures} times in a row`;
}

const STATE_TEXT = { ok: 'OK', stalled: 'Stalled', unknown: 'Unknown' } as const;

export function HealthCard({ networkId }: { networkId: string }) {
  const [health, setHealth] = useState<NetworkHealth | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<NetworkHealth>(`/networks/${encodeURIComponent(networkId)}/health`).then(setHealth, (err: unknown) => setError(errorMessage(err)));
  }, [networkId]);
  return (
    <Card className="ct-network-health">
      <CardHeader>
        <h2>Health</h2>
      </CardHeader>
      <CardBody>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : !health ? (
          <Spinner />
        ) : (
          <HealthFacts health={health} />
        )}
      </CardBody>
    </Card>
  );
}

function HealthFacts({ health: h }: { health: NetworkHealth }) {
  const unknownWhy = !h.checked_at
    ? 'not checked yet'
    : !h.enough_history
      ? `not enough history (${h.baseline.span_days} of ${h.baseline.min_history_days} days, ${h.baseline.events} of ${h.baseline.min_history_events} events)`
      : null;
  return (
    <>
      {h.state === 'stalled' ? (
        <Notice status="error" isDismissible={false}>
          Stalled since {h.stalled_since}: {h.reasons.map(reasonText).join('; ')}
        </Notice>
      ) : null}
      <dl className="ct-facts">
        <dt>State</dt>
        <dd className={h.state === 'stalled' ? 'ct-negative' : undefined}>
          {STATE_TEXT[h.state]}
          {h.state === 'unknown' && unknownWhy ? <span className="ct-aside"> ({unknownWhy})</span> : null}
        </dd>
        <dt>Expected this hour</dt>
        <dd>{h.baseline.expected_this_hour}</dd>
        <dt>Last hour</dt>
        <dd>
          {h.last_hour.observed} received, {h.last_hour.expected} expected
        </dd>
        {h.runs.map((r) => (
          <RunFacts key={r.run} run={r} />
        ))}
        <dt>Last alarm</dt>
        <dd>{h.last_alarm ? `${h.last_alarm.at}: ${h.last_alarm.reasons.map(reasonText).join('; ')}` : 'none'}</dd>
        {h.recovered_at ? (
          <>
            <dt>Recovered</dt>
            <dd>{h.recovered_at}</dd>
          </>
        ) : null}
        <dt>Checked</dt>
        <dd>{h.checked_at ?? 'not yet'}</dd>
      </dl>
    </>
  );
}

function RunFacts({ run }: { run: NetworkHealth['runs'][number] }) {
  return (
    <>
      <dt>{RUN_NAMES[run.run] ?? run.run}</dt>
      <dd>
        last succeeded {run.ok_at ?? 'never'}
        {run.auth_failures ? <span className="ct-negative"> ({run.auth_failures} refused logins in a row)</span> : null}
      </dd>
    </>
  );
}
