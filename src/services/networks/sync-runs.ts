// How a network's runs ended (its sync, order poll and coupon refresh), written to its row for
// GET /networks: `last_sync_result` per kind of run, the latest error with its time, secrets scrubbed.
// Each kind also keeps when it last succeeded (`ok_at`) and how many of its runs in a row the
// network refused the credentials for (`auth_failures`): the intake watchdog alarms on both.
import type { NetworkStore } from './store.js';

/** The code a network module throws when the network refuses the credentials (src/networks/network-error.ts). */
export const AUTH_REFUSED = 'svc_network_unauthorized';

/** Records the whole result of a sync (NetworkService.recordSync). */
export async function writeSyncOutcome(store: NetworkStore, id: string, outcome: { at: Date; result?: unknown; error?: string | null }): Promise<void> {
  await writeSync(store, id, outcome.at, () => outcome.result, outcome.error ?? null);
}

/** Records one kind of run under its own key of `last_sync_result` (NetworkService.recordRun). */
export async function writeRunOutcome(
  store: NetworkStore,
  id: string,
  run: 'advertisers' | 'orders' | 'coupons' | 'payments',
  counts: object,
  error: string | null,
  code: string | null = null,
): Promise<void> {
  const at = store.deps.clock.now();
  await writeSync(
    store,
    id,
    at,
    (previous) => {
      const base = previous && typeof previous === 'object' && !Array.isArray(previous) ? (previous as Record<string, unknown>) : {};
      // Each kind's own outcome: `error` is null when its last run succeeded, whatever another
      // kind's run left in `last_error` (the latest error of any run, kept with its time).
      const before = base[run] && typeof base[run] === 'object' ? (base[run] as Record<string, unknown>) : {};
      const okAt = error ? (typeof before.ok_at === 'string' ? before.ok_at : null) : at.toISOString();
      const authFailures = code === AUTH_REFUSED ? (typeof before.auth_failures === 'number' ? before.auth_failures : 0) + 1 : 0;
      return { ...base, [run]: { ...counts, error, ...(code ? { code } : {}), at: at.toISOString(), ok_at: okAt, auth_failures: authFailures } };
    },
    error,
  );
}

async function writeSync(store: NetworkStore, id: string, at: Date, resultOf: (previous: unknown) => unknown, rawError: string | null): Promise<void> {
  await store.resolve(id);
  const secrets = store.deps.secrets;
  await store.update(id, async (row, t) => {
    const value = resultOf(row.last_sync_result);
    const result = value === undefined ? null : JSON.stringify(secrets ? secrets.scrubDeep(value) : value);
    const error = rawError ? (secrets ? secrets.scrub(rawError) : rawError).slice(0, 1000) : null;
    await store.deps.db.execute(
      `UPDATE networks SET last_sync_at = ?, last_sync_result = ?, ${error ? 'last_error = ?, last_error_at = ?, ' : ''}updated_at = ? WHERE id = ?`,
      [at, result, ...(error ? [error, at] : []), store.deps.clock.now(), id],
      t,
    );
  });
}
