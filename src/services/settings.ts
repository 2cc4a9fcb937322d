// Small named values shared by every process on the database (e.g. the auth revision that tells
// each daemon its credential cache is stale).
import type { Transaction } from '../db/transaction.js';
import type { Database } from '../db/database.js';

export class SettingsService {
  private readonly db: Database;
  private revisionRead: Promise<string> | null = null;
  private nextRevisionRead: Promise<string> | null = null;

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

  /** Marks every cached credential stale, in every process (a revoke, a disabled user, a role change). */
  async bumpAuthRevision(transaction?: Transaction): Promise<void> {
    await this.set('auth_revision', `${Date.now()}-${Math.random().toString(36).slice(2)}`, transaction);
  }

  /**
   * The current auth revision, read from the database after the call began. Concurrent callers
   * share reads: one read runs at a time and everyone who arrived while it ran shares the next.
   */
  authRevision(): Promise<string> {
    if (!this.revisionRead) {
      this.revisionRead = this.readRevision().finally(() => (this.revisionRead = null));
      return this.revisionRead;
    }
    if (!this.nextRevisionRead) {
      const after = this.revisionRead.catch(() => undefined);
      this.nextRevisionRead = after.then(() => {
        this.nextRevisionRead = null;
        return this.authRevision();
      });
    }
    return this.nextRevisionRead;
  }

  private async readRevision(): Promise<string> {
    return (await this.get('auth_revision')) ?? '0';
  }
}
