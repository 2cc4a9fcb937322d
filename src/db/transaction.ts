// A database transaction as the services see it: pass it to `db.select` / `db.execute` so the
// statement joins it, and register work that must wait until it has committed.
export interface Transaction {
  /** Runs `fn` once the transaction has committed; never if it rolls back (or is retried). */
  afterCommit(fn: () => unknown): void;
}
