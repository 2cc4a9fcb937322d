// The live progress line of a job a command runs in-process (`advertisers sync`, `orders poll`):
// one line on stderr, redrawn in place and erased at the end, only when stderr is a terminal.
// A carriage return and "erase to end of line" are all it takes; Ink (used by `cashtrack logs`)
// would add a React render loop and its own control of the stream for a single line of text.
import type { JobProgress, JobProgressUpdate } from '../services/jobs/index.js';
import { terminalLine } from '../terminal-text.js';
import type { Io } from './io.js';

/** The stream the line is drawn on: stderr, so stdout stays clean for what the command prints. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** What the progress line of a job shows. */
export interface ProgressSnapshot {
  type: string;
  progress: JobProgress;
  /** The network in progress (from the per-network checkpoint), when known. */
  network: string | null;
  /** Its counts so far (created, updated, ...), when the checkpoint has them. */
  counts: Record<string, number>;
  /** Networks finished so far. */
  networksDone: number;
  elapsedMs: number;
  /** Estimated time left (see `estimateRemaining`), or null when there is no estimate. */
  remainingMs?: number | null;
}

const ERASE_LINE = '\r\x1b[K';
const SPINNER = ['|', '/', '-', '\\'];
/** What `progress.done` counts, per job type. */
const UNITS: Record<string, [string, string]> = {
  'advertisers.sync': ['advertiser', 'advertisers'],
  'orders.poll': ['transaction', 'transactions'],
  'pages.bulk': ['advertiser', 'advertisers'],
  'coupons.refresh': ['coupon', 'coupons'],
  'exports.run': ['row', 'rows'],
};
/** Counts worth a glance while it runs, in this order (`pages` and `seen` repeat the job's progress). */
const SHOWN_COUNTS = ['created', 'updated', 'deactivated', 'duplicate', 'removed', 'failed'];
const BAR_WIDTH = 20;

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/**
 * Time left at the rate seen since the line started: `(total - done)` items at `doneSinceStart /
 * elapsedMs`. Null without a total, before the first item or the first millisecond, and once done
 * (a resumed job's earlier items are not counted in the rate: they took no time here).
 */
export function estimateRemaining(progress: JobProgress, doneAtStart: number, elapsedMs: number): number | null {
  const doneHere = progress.done - doneAtStart;
  if (progress.total === null || doneHere <= 0 || elapsedMs <= 0 || progress.done >= progress.total) return null;
  return Math.ceil(((progress.total - progress.done) * elapsedMs) / doneHere);
}

/** One line of text (no control characters) for a snapshot; `frame` turns the spinner. */
export function renderProgress(snapshot: ProgressSnapshot, frame = 0): string {
  const { progress } = snapshot;
  const [one, many] = UNITS[snapshot.type] ?? ['item', 'items'];
  const unit = progress.done === 1 && progress.total === null ? one : many;
  const parts: string[] = [];
  if (progress.total !== null && progress.total > 0) {
    const filled = Math.min(BAR_WIDTH, Math.floor((progress.done / progress.total) * BAR_WIDTH));
    parts.push(
      `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${progress.done}/${progress.total} ${unit}  ${Math.min(100, Math.floor((progress.done / progress.total) * 100))}%`,
    );
    if (snapshot.remainingMs !== undefined && snapshot.remainingMs !== null) parts.push(`~${formatElapsed(snapshot.remainingMs)} left`);
  } else {
    parts.push(`${SPINNER[frame % SPINNER.length]} ${progress.done} ${unit}`);
  }
  if (progress.failed) parts.push(`${progress.failed} failed`);
  const head = snapshot.network ? `${snapshot.type} ${snapshot.network}` : snapshot.type;
  const counts = SHOWN_COUNTS.filter((k) => k !== 'failed' && snapshot.counts[k]).map((k) => `${snapshot.counts[k]} ${k}`);
  const done = snapshot.networksDone ? [`${snapshot.networksDone} network${snapshot.networksDone === 1 ? '' : 's'} done`] : [];
  return [head, ...parts, ...counts, ...done, formatElapsed(snapshot.elapsedMs)].join('  ');
}

/** The network and counts a per-network job's checkpoint (src/jobs/types/per-network.ts) holds. */
function fromCheckpoint(value: unknown): { network: string | null; counts: Record<string, number>; networksDone: number } | null {
  if (!value || typeof value !== 'object') return null;
  const { current, done } = value as { current?: { network?: unknown; counts?: unknown } | null; done?: unknown };
  const counts: Record<string, number> = {};
  if (current?.counts && typeof current.counts === 'object') {
    for (const [k, v] of Object.entries(current.counts)) if (typeof v === 'number' && Number.isFinite(v)) counts[k] = v;
  }
  return {
    network: typeof current?.network === 'string' ? current.network : null,
    counts,
    networksDone: done && typeof done === 'object' ? Object.keys(done).length : 0,
  };
}

/** A job's progress line on a terminal stream: `start`, `update` with each write, `stop` erases it. */
export class JobProgressLine {
  private snapshot: ProgressSnapshot | null = null;
  private startedAt = 0;
  private doneAtStart = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | null = null;
  private drawn = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: { now?: () => number; tickMs?: number } = {},
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Draws the first line and keeps the spinner and elapsed time moving between updates. */
  start(job: { type: string; progress: JobProgress; params?: Record<string, unknown> }): void {
    this.startedAt = this.now();
    this.doneAtStart = job.progress.done;
    // A job for one network names it from the start; one for every network, once it begins each.
    const network = typeof job.params?.network === 'string' ? job.params.network : null;
    this.snapshot = { type: job.type, progress: { ...job.progress }, network, counts: {}, networksDone: 0, elapsedMs: 0 };
    this.draw();
    const tick = this.options.tickMs ?? 125;
    if (tick > 0) {
      this.timer = setInterval(() => {
        this.frame++;
        this.draw();
      }, tick);
      this.timer.unref();
    }
  }

  update(update: Pick<JobProgressUpdate, 'progress' | 'checkpoint'>): void {
    if (!this.snapshot) return;
    this.snapshot.progress = { ...update.progress };
    const where = update.checkpoint === undefined ? null : fromCheckpoint(update.checkpoint);
    if (where) {
      // Between networks the checkpoint has no current one: keep showing the last until the next starts.
      if (where.network) {
        this.snapshot.network = where.network;
        this.snapshot.counts = where.counts;
      }
      this.snapshot.networksDone = where.networksDone;
    }
    this.draw();
  }

  /** Erases the line (the command then prints its result as it would without a terminal). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.drawn) this.stream.write(ERASE_LINE);
    this.drawn = false;
    this.snapshot = null;
  }

  private draw(): void {
    if (!this.snapshot) return;
    this.snapshot.elapsedMs = this.now() - this.startedAt;
    this.snapshot.remainingMs = estimateRemaining(this.snapshot.progress, this.doneAtStart, this.snapshot.elapsedMs);
    // The network's name comes from a checkpoint: shown as text, never obeyed.
    let line = terminalLine(renderProgress(this.snapshot, this.frame));
    // One character short of the width: writing the last column wraps on some terminals.
    const width = this.stream.columns && this.stream.columns > 1 ? this.stream.columns - 1 : 79;
    if (line.length > width) line = width > 1 ? `${line.slice(0, width - 1)}~` : '';
    this.stream.write(`${ERASE_LINE}${line}`);
    this.drawn = true;
  }
}

/**
 * The progress line for a job the command runs in-process, or null: only when stderr is a
 * terminal that understands cursor control, and not with `--json` or `--no-progress`.
 */
export function jobProgressLine(io: Io, opts: { json?: boolean; progress?: boolean }): JobProgressLine | null {
  if (opts.json || opts.progress === false) return null;
  if (!io.stderr.isTTY) return null;
  if (io.env.TERM === 'dumb') return null;
  // Past the gate of io.stderr: the line's own carriage return and erase are the point.
  return new JobProgressLine(io.raw?.stderr ?? io.stderr);
}
