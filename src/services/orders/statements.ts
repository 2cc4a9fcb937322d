// Payments statements: networks that list their payments apart from the transactions (Admitad's
// `GET /payments/` and each payment's statement) are read by the `networks.payments` job, page by
// page, into `recordPayments` (source `statement`). Reading a statement again changes nothing.
import type { Clock } from '../../clock.js';
import { ServiceError } from '../../errors.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import type { PaymentLine, PaymentSource, PaymentSummary } from './payments.js';

/** How far back a statement read looks by default: networks pay about three months after the sale, and list a payment once. */
export const STATEMENT_DAYS = 180;
const DAY = 86_400_000;

export interface StatementCounts {
  pages: number;
  lines: number;
  recorded: number;
  already: number;
  unknown: number;
  conflict: number;
  invalid: number;
  released: number;
}

export interface StatementDeps {
  clock: Clock;
  logger: LogService;
  networks: NetworkService;
  record(network: string, lines: PaymentLine[], source: PaymentSource, actor: string): Promise<PaymentSummary>;
}

/** Whether a network's module reads a payments statement (409 svc_network_no_payments otherwise). */
export function requireStatement(module: { id: string; name: string; listPayments?: unknown }): void {
  if (!module.listPayments)
    throw new ServiceError(
      'svc_network_no_payments',
      `${module.name} has no payments statement: its payments come with its transactions (the order poll) or by a CSV import.`,
      409,
      { network: module.id },
    );
}

/** Reads one network's payments statement since `since` (default 180 days ago) and records its lines. */
export async function readStatement(
  deps: StatementDeps,
  network: string,
  options: { since?: Date; signal?: AbortSignal; actor?: string; onProgress?: (delta: { done?: number; failed?: number }) => void } = {},
): Promise<StatementCounts & { since: string }> {
  const { module, runtime } = await deps.networks.runtime(network, options.signal);
  requireStatement(module);
  const since = options.since ?? new Date(deps.clock.now().getTime() - STATEMENT_DAYS * DAY);
  const counts: StatementCounts = { pages: 0, lines: 0, recorded: 0, already: 0, unknown: 0, conflict: 0, invalid: 0, released: 0 };
  const actor = options.actor ?? 'statement';
  try {
    for await (const lines of module.listPayments!(runtime, since)) {
      options.signal?.throwIfAborted();
      const s = await deps.record(module.id, lines, 'statement', actor);
      counts.pages++;
      counts.lines += lines.length;
      for (const k of ['recorded', 'already', 'unknown', 'conflict', 'invalid', 'released'] as const) counts[k] += s[k];
      options.onProgress?.({ done: lines.length, failed: s.invalid });
    }
  } catch (err) {
    if (options.signal?.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    await deps.networks.recordRun(module.id, 'payments', counts, message);
    deps.logger.error('orders', 'Payments statement read failed', { network: module.id, ...counts, error: message.slice(0, 500) });
    throw err;
  }
  await deps.networks.recordRun(module.id, 'payments', counts, null);
  return { ...counts, since: since.toISOString() };
}
