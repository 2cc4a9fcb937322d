// Small named values shared by every process on the database (e.g. the auth revision that tells
// each daemon its credential cache is stale).
import { randomBytes } from 'node:crypto';
import type { Transaction } from '../../db/transaction.js';
import type { Database } from '../../db/database.js';

const AUTH_REVISION = 'auth_revision';

/** Named values and the revisions that tell every process its cache is stale. */
export class SettingsService {
  private readonly db: Database;
  /** Per revision name: the read running now, and the one that callers arriving meanwhile share. */
  private readonly revisionReads = new Map<string, { current: Promise<string> | null; next: Promise<string> | null }>();

  constructor(deps: { db: Database }) {
    this.db = deps.db;
  }

  async get(name: string, transaction?: Transaction): Promise<string | null> {
    const rows = await this.db.select<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name], transaction);
    return rows[0]?.value ?? null;
  }

  async set(name: string, value: string, transaction?: Transaction): Promise<void> {
    await this.db.execute(this.db.upsert('settings', ['name', 'value'], ['name'], ['value']), [name, value], transaction);
  }

  /**
   * Moves the revision kept under `name`, in `transaction` when given: every process that caches
   * what the revision guards reads it again on its next call.
   */
  async bumpRevision(name: string, transaction?: Transaction): Promise<void> {
    await this.set(name, `${Date.now()}-${randomBytes(6).toString('hex')}`, transaction);
  }

  /**
   * The current value of the revision kept under `name` ('0' before its first bump), read from
   * the database after the call began. Concurrent callers share reads: one read per name runs at
   * a time and everyone who arrived while it ran shares the next.
   */
  revision(name: string): Promise<string> {
    const reads = this.revisionReads.get(name) ?? { current: null, next: null };
    this.revisionReads.set(name, reads);
    if (!reads.current) {
      reads.current = this.get(name)
        .then((v) => v ?? '0')
        .finally(() => (reads.current = null));
      return reads.current;
    }
    if (!reads.next) {
      const after = reads.current.catch(() => undefined);
      reads.next = after.then(() => {
        reads.next = null;
        return this.revision(name);
      });
    }
    return reads.next;
  }

  /** Marks every cached credential stale, in every process (a revoke, a disabled user, a role change). */
  async bumpAuthRevision(transaction?: Transaction): Promise<void> {
    await this.bumpRevision(AUTH_REVISION, transaction);
  }

  /** The current auth revision (see `revision`). */
  authRevision(): Promise<string> {
    return this.revision(AUTH_REVISION);
  }
}
