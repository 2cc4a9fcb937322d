// A database transaction as the services see it: pass it to `db.select` / `db.execute` so the
// statement joins it, and register work that must wait until it has committed.
export interface Transaction {
  /** Runs `fn` once the transaction has committed; never if it rolls back (or is retried). */
  afterCommit(fn: () => unknown): void;
  /** The whole transaction, the same for every savepoint inside it: the key of what is read once per transaction. */
  readonly outermost: Transaction;
  /**
   * Runs `fn` inside a SAVEPOINT of this transaction: when it throws, its statements (and its
   * after-commit work) are rolled back and the rest of the transaction stands.
   */
  savepoint<T>(fn: (t: Transaction) => Promise<T>): Promise<T>;
}
