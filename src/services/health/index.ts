// Liveness and readiness for load balancers and orchestrators. Ready means: the database answers
// within a bound, this release's migrations are all applied, and the daemon is not stopping (a
// stopping daemon answers 503 at once, so a balancer takes it out while its requests drain).
import type { Database } from '../../db/database.js';
import { migrationStatus } from '../../db/migrator.js';

export interface Readiness {
  ready: boolean;
  checks: {
    database: 'ok' | 'unreachable';
    migrations: 'current' | 'pending' | 'unknown';
    accepting: 'yes' | 'stopping';
  };
  pending?: string[];
}

/** How long the database may take to answer a readiness probe. */
const PROBE_TIMEOUT_MS = 2_000;
/** Once current, migrations are looked at again after this long (a probe every second stays cheap). */
const MIGRATIONS_RECHECK_MS = 30_000;

/** Readiness of this process: the daemon's probe routes read it; `serve` marks it stopping. */
export class HealthService {
  private stopping = false;
  private currentSince: number | null = null;

  constructor(private readonly deps: { db: Database; probeTimeoutMs?: number }) {}

  /** From now on the daemon is not ready (it is draining its requests before it stops). */
  markStopping(): void {
    this.stopping = true;
  }

  async readiness(): Promise<Readiness> {
    const accepting = this.stopping ? 'stopping' : 'yes';
    if (this.stopping) return { ready: false, checks: { database: 'ok', migrations: 'unknown', accepting } };
    const reachable = await this.probe();
    if (!reachable) return { ready: false, checks: { database: 'unreachable', migrations: 'unknown', accepting } };
    const pending = await this.pendingMigrations();
    if (pending === null) return { ready: false, checks: { database: 'unreachable', migrations: 'unknown', accepting } };
    if (pending.length) return { ready: false, checks: { database: 'ok', migrations: 'pending', accepting }, pending };
    return { ready: true, checks: { database: 'ok', migrations: 'current', accepting } };
  }

  private async probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.deps.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
    });
    try {
      const answered = this.deps.db.select('SELECT 1 AS ok').then(
        () => true,
        () => false,
      );
      return await Promise.race([answered, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Names of this release's migrations the database lacks; null when they cannot be read. */
  private async pendingMigrations(): Promise<string[] | null> {
    if (this.currentSince !== null && Date.now() - this.currentSince < MIGRATIONS_RECHECK_MS) return [];
    try {
      const { pending } = await migrationStatus(this.deps.db);
      this.currentSince = pending.length ? null : Date.now();
      return pending;
    } catch {
      return null;
    }
  }
}
