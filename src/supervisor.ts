// The supervisor of `cashtrack serve --workers N`: the primary process of node:cluster, holding the
// port and handing each connection to a worker. It opens no database and builds no context: each
// worker is a whole daemon (src/cli/commands/serve.ts), and what must happen once (a job, a
// schedule's slot, a webhook delivery, a throttle's count) is settled in the database between the
// workers as it is between daemons on several hosts. The supervisor only keeps N of them running:
// it replaces one that dies (waiting longer each time one dies young, so a worker that cannot start
// does not spin), stops them all on SIGTERM or SIGINT, and on SIGHUP replaces them one at a time,
// starting the new one before the old one stops taking connections, so no connection is refused.
import cluster, { type Worker } from 'node:cluster';
import { ServiceError } from './errors.js';
import { terminalJson } from './terminal-text.js';

/** What a worker sends its supervisor once it serves: listening, with its jobs and schedules started. */
export const WORKER_READY = 'cashtrack:worker-ready';

/** A worker that ran at least this long died of something other than its start: it is replaced at once. */
const STEADY_MS = 10_000;
/** The wait before replacing a worker that died young, doubled for each young death in a row. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** A stopping worker drains its requests (10 s) and hands back its jobs; past this it is killed. */
const STOP_GRACE_MS = 30_000;

export interface SupervisorOptions {
  workers: number;
  /** The daemon's stdout when `log.stdout` is on: the supervisor's JSON log lines go there. */
  log: NodeJS.WritableStream | null;
  /** Where the start line goes, as a single daemon writes its own. */
  stderr: NodeJS.WritableStream;
}

export class Supervisor {
  private readonly live = new Set<Worker>();
  /** Workers told to stop (a reload or the end): their exit is expected, not replaced. */
  private readonly retiring = new Set<Worker>();
  private readonly startedAt = new Map<Worker, number>();
  private readonly restarts = new Set<NodeJS.Timeout>();
  private youngDeaths = 0;
  /** Until the first worker is ready, a death is the start's failure (run reports it), not replaced. */
  private started = false;
  private stopping = false;
  private reloading = false;
  private reloadAgain = false;

  constructor(private readonly options: SupervisorOptions) {}

  /**
   * Starts the workers and resolves once they have all stopped again (after SIGTERM or SIGINT).
   * The first worker starts alone, so only one process migrates the database and creates the
   * first administrator; when it cannot start, nothing else is tried (its error is on stderr).
   */
  async run(): Promise<void> {
    const done = new Promise<void>((resolve) => this.handleSignals(resolve));
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
    let first: { url: string };
    try {
      first = await this.fork();
    } catch (exit) {
      if (this.stopping) return done;
      throw new ServiceError('svc_worker_failed', `The first worker exited (${String(exit)}) before it was ready: see its error above.`, 500, { exit });
    }
    this.started = true;
    await Promise.allSettled(Array.from({ length: this.options.workers - 1 }, () => this.fork()));
    this.logLine('info', 'Workers started', { workers: this.live.size, pid: process.pid });
    this.options.stderr.write(`cashtrack: ${this.live.size} workers listening on ${first.url} (supervisor pid ${process.pid})\n`);
    await done;
  }

  /** Forks a worker; resolves when it is ready, rejects (with how it ended) when it exits first. */
  private fork(): Promise<{ worker: Worker; url: string }> {
    const worker = cluster.fork();
    this.live.add(worker);
    this.startedAt.set(worker, Date.now());
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        const m = message as { type?: string; url?: string } | null;
        if (m?.type !== WORKER_READY) return;
        worker.off('exit', onExit);
        resolve({ worker, url: String(m.url) });
      };
      const onExit = (code: number | null, signal: string | null) => {
        worker.off('message', onMessage);
        reject(signal ?? `code ${code}`);
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    this.live.delete(worker);
    const expected = this.retiring.delete(worker);
    const lived = Date.now() - (this.startedAt.get(worker) ?? 0);
    this.startedAt.delete(worker);
    if (expected || this.stopping || !this.started) return;
    // A reload's new worker that failed to start leaves the old one in place: no replacement is due.
    const serving = [...this.live].filter((w) => !this.retiring.has(w)).length + this.restarts.size;
    if (serving >= this.options.workers) {
      this.logLine('error', 'Worker exited', { pid: worker.process.pid, code, signal, lived_ms: lived });
      return;
    }
    this.youngDeaths = lived >= STEADY_MS ? 0 : this.youngDeaths + 1;
    const delay = this.youngDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.youngDeaths - 1));
    this.logLine('error', 'Worker exited; starting another', { pid: worker.process.pid, code, signal, lived_ms: lived, restart_in_ms: delay });
    const timer = setTimeout(() => {
      this.restarts.delete(timer);
      if (this.stopping) return;
      // Its death, should it die too, is handled here again (with a longer wait).
      this.fork().then(
        ({ worker: w }) => this.logLine('info', 'Worker replaced', { pid: w.process.pid }),
        () => {},
      );
    }, delay);
    this.restarts.add(timer);
  }

  private handleSignals(stopped: () => void): void {
    const stop = (signal: NodeJS.Signals) => {
      if (this.stopping) {
        // A second signal: stop now, without waiting for the drain.
        for (const w of this.live) w.process.kill('SIGKILL');
        return;
      }
      this.stopping = true;
      this.logLine('info', 'Stopping', { signal, workers: this.live.size });
      for (const timer of this.restarts) clearTimeout(timer);
      this.restarts.clear();
      void Promise.all([...this.live].map((w) => this.retire(w))).then(() => {
        process.off('SIGHUP', onHup);
        stopped();
      });
    };
    const onHup = () => {
      // Before the first worker is ready there is nothing to replace yet.
      if (this.stopping || !this.started) return;
      if (this.reloading) {
        this.reloadAgain = true;
        return;
      }
      this.reloading = true;
      void this.reload().finally(() => {
        this.reloading = false;
        if (this.reloadAgain && !this.stopping) {
          this.reloadAgain = false;
          onHup();
        }
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGHUP', onHup);
  }

  /**
   * SIGHUP: each worker running now is replaced in turn. The new one is ready (listening, the
   * port shared with the old) before the old one is told to stop; the old one then takes no new
   * connection and finishes those in flight. A new worker that cannot start ends the reload with
   * the old ones still serving.
   */
  private async reload(): Promise<void> {
    const old = [...this.live].filter((w) => !this.retiring.has(w));
    this.logLine('info', 'Reloading', { workers: old.length });
    for (const worker of old) {
      if (this.stopping) return;
      if (!this.live.has(worker)) continue;
      try {
        const { worker: fresh } = await this.fork();
        this.logLine('info', 'Worker replaced', { pid: fresh.process.pid, old_pid: worker.process.pid });
      } catch (exit) {
        this.logLine('error', 'Reload stopped: a new worker exited before it was ready', { exit, kept_pid: worker.process.pid });
        return;
      }
      await this.retire(worker);
    }
    this.logLine('info', 'Reloaded', { workers: this.live.size });
  }

  /** Tells a worker to stop as a daemon does on SIGTERM, and waits for its exit (killing it past the grace). */
  private retire(worker: Worker): Promise<void> {
    this.retiring.add(worker);
    if (worker.isDead()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      worker.process.kill('SIGTERM');
    });
  }

  /** A log line as the daemon writes its own (the supervisor has no database to keep it in). */
  private logLine(level: 'info' | 'error', message: string, context: Record<string, unknown>): void {
    this.options.log?.write(`${terminalJson({ time: new Date().toISOString(), level, source: 'supervisor', message, context })}\n`);
  }
}
