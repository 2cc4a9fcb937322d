// Group commit of units of work (the money writes: adjustments, reversals, payouts; and claims). A unit is a
// function of a transaction, what a caller would otherwise hand `Database.transaction`. Units that
// arrive while a group commits wait (BatchQueue) and run together in the next transaction, one
// after the other in arrival order, each inside a SAVEPOINT of its own: a unit's refusal rolls
// back its own statements only and is answered to its caller once the group has committed, so
// each caller sees exactly what it would have seen alone, and the first of two conflicting units
// wins as it would have alone. Any other failure (a deadlock, a lost connection, a bug) is the
// group's: it rolls back whole and each unit runs again alone in a transaction of its own (with
// the usual retries), in the same order. A lone unit runs at once in its own transaction.
import { ServiceError } from '../errors.js';
import { BatchQueue } from './batch-queue.js';
import type { Transaction } from './transaction.js';

/**
 * An error a unit answers with that is its own outcome, as a ServiceError is: the unit's
 * savepoint rolls back and the rest of the group stands (the idempotency key's "taken").
 */
export class UnitOutcome extends Error {}

export type Unit<R> = (t: Transaction) => Promise<R>;

type Queued = { unit: Unit<unknown>; resolve: (value: unknown) => void; reject: (err: unknown) => void };
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What runs a transaction: `Database.transaction` (`retries` 0: the group's own attempt is not retried). */
export type RunTransaction = <T>(fn: (t: Transaction) => Promise<T>, retries?: number) => Promise<T>;

const ownOutcome = (err: unknown): boolean => err instanceof ServiceError || err instanceof UnitOutcome;

/** Runs units in groups (see the file's header). */
export class GroupCommit {
  private readonly queue: BatchQueue<Queued>;
  /** Transactions of several units committed, and those that failed as a whole, their units then run alone (monitoring, tests). */
  readonly stats = { groups: 0, grouped: 0, failed: 0 };

  constructor(
    private readonly transaction: RunTransaction,
    maxGroup: number,
    /** Groups (or lone units) run at once. */
    readonly inFlight: number,
  ) {
    this.queue = new BatchQueue((items) => this.runGroup(items), maxGroup, inFlight);
  }

  /** Units waiting for a group. */
  get waiting(): number {
    return this.queue.waiting;
  }

  /** Runs `unit` with the group it joins; settles once its transaction has committed (or rolled back). */
  run<R>(unit: Unit<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => this.queue.submit({ unit: unit as Unit<unknown>, resolve: resolve as (value: unknown) => void, reject }));
  }

  private async runGroup(items: Queued[]): Promise<void> {
    if (items.length > 1) {
      let settled: Settled[] | null = null;
      try {
        settled = await this.transaction(async (t) => {
          const out: Settled[] = [];
          for (const item of items) {
            try {
              out.push({ ok: true, value: await t.savepoint(item.unit) });
            } catch (error) {
              if (!ownOutcome(error)) throw error;
              out.push({ ok: false, error });
            }
          }
          return out;
        }, 0);
      } catch {
        this.stats.failed++;
      }
      if (settled) {
        this.stats.groups++;
        this.stats.grouped += items.length;
        for (const [k, item] of items.entries()) {
          const s = settled[k];
          if (s.ok) item.resolve(s.value);
          else item.reject(s.error);
        }
        return;
      }
    }
    // Alone, one after the other: a later unit sees what an earlier one committed, as in the group.
    for (const item of items) {
      try {
        item.resolve(await this.transaction(item.unit));
      } catch (err) {
        item.reject(err);
      }
    }
  }
}
