// Write transactions on the direct connections: the handle services receive, one BEGIN ... COMMIT
// on a connection of its own, and the queue that makes this process SQLite's only writer.
import type { DirectDriver, TxConnection } from './direct.js';
import type { Transaction } from './transaction.js';

/** The transaction handle services receive; statements given it run on its connection. */
export class DirectTransaction implements Transaction {
  readonly after: (() => unknown)[] = [];
  readonly outermost: Transaction;

  /** `depth`: how many savepoints this handle is inside (their names differ by it). */
  constructor(
    readonly conn: TxConnection,
    private readonly depth = 0,
    outermost?: Transaction,
  ) {
    this.outermost = outermost ?? this;
  }
  afterCommit(fn: () => unknown): void {
    this.after.push(fn);
  }

  /**
   * The same SQL on both dialects. Savepoints side by side share a name (one per depth): a new one
   * replaces (MariaDB) or stacks on (SQLite) the last, and ROLLBACK TO reaches the newest. None is
   * released, which spares a round trip each; the commit releases them all.
   */
  async savepoint<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
    const name = `unit${this.depth}`;
    await this.conn.run(`SAVEPOINT ${name}`, []);
    const inner = new DirectTransaction(this.conn, this.depth + 1, this.outermost);
    let result: T;
    try {
      result = await fn(inner);
    } catch (err) {
      await this.conn.run(`ROLLBACK TO SAVEPOINT ${name}`, []);
      throw err;
    }
    this.after.push(...inner.after);
    return result;
  }
}

/** One attempt of `Database.transaction`: `fn` between BEGIN and COMMIT, rolled back if it throws. */
export async function runTransaction<T>(direct: DirectDriver, fn: (t: Transaction) => Promise<T>): Promise<{ result: T; after: (() => unknown)[] }> {
  const conn = await direct.begin();
  const tx = new DirectTransaction(conn);
  let result: T;
  try {
    result = await fn(tx);
  } catch (err) {
    await conn.rollback().catch(() => {});
    throw err;
  }
  await conn.commit();
  return { result, after: tx.after };
}

export class WriteQueue {
  /** Tail of the in-process queue of SQLite writers (SQLite has one writer at a time anyway). */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Runs `fn` as this process's only SQLite writer. Writers waiting in SQLite's busy handler each
   * hold a libuv thread; queued here instead, the lock holder always has a thread to commit with,
   * and the busy timeout only arbitrates between processes. Waiting longer than the busy timeout
   * fails as SQLITE_BUSY would (and is retried like it).
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        previous,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error('timed out waiting for the SQLite write lock'), { code: 'SQLITE_BUSY' })), this.timeoutMs);
        }),
      ]);
    } catch (err) {
      // Keep the queue order: whoever is behind us waits for our predecessor, not for us.
      void previous.then(release);
      clearTimeout(timer);
      throw err;
    }
    clearTimeout(timer);
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
