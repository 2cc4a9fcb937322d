import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { formatElapsed, JobProgressLine, jobProgressLine, renderProgress } from '../../src/cli/progress.js';

const ERASE = '\r\x1b[K';

/** A stream posing as a terminal of `columns` columns, keeping what is written. */
function terminal(columns = 100) {
  const writes: string[] = [];
  return { isTTY: true, columns, writes, write: (s: string) => writes.push(s) > 0 };
}

function io(stderr: object, env: Record<string, string> = {}): Io {
  return { stdout: new PassThrough(), stderr: stderr as Io['stderr'], stdin: new PassThrough(), env };
}

const none = { total: null, done: 0, failed: 0 };

describe('the job progress line', () => {
  it('draws the job at once, redraws it in place with each update, and erases it at the end', () => {
    let now = 1_000;
    const tty = terminal();
    const line = new JobProgressLine(tty, { now: () => now, tickMs: 0 });
    line.start({ type: 'advertisers.sync', progress: none });
    now += 3_000;
    line.update({ progress: { total: null, done: 2, failed: 0 }, checkpoint: { done: {}, current: { network: 'admitad', sync: 1, counts: { pages: 2, seen: 1000, created: 900, updated: 100, deactivated: 0, failed: 0 } } } });
    now += 62_000;
    line.update({ progress: { total: null, done: 3, failed: 0 }, checkpoint: { done: { admitad: {} }, current: null } });
    line.stop();
    expect(tty.writes.every((w) => w.startsWith(ERASE))).toBe(true);
    expect(tty.writes.map((w) => w.slice(ERASE.length))).toEqual([
      'advertisers.sync  | 0 pages  0s',
      'advertisers.sync admitad  | 2 pages  900 created  100 updated  3s',
      'advertisers.sync admitad  | 3 pages  900 created  100 updated  1 network done  1m05s',
      '',
    ]);
  });

  it('keeps the spinner and the elapsed time moving between updates', async () => {
    const tty = terminal();
    const line = new JobProgressLine(tty, { tickMs: 5 });
    line.start({ type: 'orders.poll', progress: none });
    await new Promise((r) => setTimeout(r, 40));
    line.stop();
    const frames = tty.writes.slice(0, -1).map((w) => w.slice(ERASE.length, ERASE.length + 14));
    expect(new Set(frames).size).toBeGreaterThan(1);
    expect(tty.writes.at(-1)).toBe(ERASE);
    const count = tty.writes.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(tty.writes.length).toBe(count);
  });

  it('names the network of a one-network job from the start', () => {
    const tty = terminal();
    const line = new JobProgressLine(tty, { now: () => 0, tickMs: 0 });
    line.start({ type: 'orders.poll', progress: none, params: { network: 'awin' } });
    line.stop();
    expect(tty.writes[0]).toBe(`${ERASE}orders.poll awin  | 0 transactions  0s`);
  });

  it('cuts the line to the width of the terminal', () => {
    const tty = terminal(30);
    const line = new JobProgressLine(tty, { tickMs: 0 });
    line.start({ type: 'orders.poll', progress: none });
    line.update({ progress: { total: null, done: 1234, failed: 5 }, checkpoint: { done: {}, current: { network: 'a-network-with-a-long-name', counts: { created: 1 } } } });
    line.stop();
    for (const w of tty.writes) expect(w.length - ERASE.length).toBeLessThanOrEqual(29);
    expect(tty.writes[1]).toMatch(/~$/);
  });

  it('shows a bar when the job knows its total, and failures', () => {
    const text = renderProgress({ type: 'orders.poll', progress: { total: 40, done: 10, failed: 2 }, network: 'awin', counts: { created: 7, duplicate: 1, failed: 2 }, networksDone: 0, elapsedMs: 9_000 });
    expect(text).toBe('orders.poll awin  [#####...............] 10/40 transactions  2 failed  7 created  1 duplicate  9s');
    expect(renderProgress({ type: 'other.job', progress: { total: null, done: 1, failed: 0 }, network: null, counts: {}, networksDone: 0, elapsedMs: 0 }, 1)).toBe('other.job  / 1 item  0s');
  });

  it('formats elapsed time in seconds, minutes and hours', () => {
    expect([formatElapsed(999), formatElapsed(59_000), formatElapsed(61_000), formatElapsed(3_725_000)]).toEqual(['0s', '59s', '1m01s', '1h02m']);
  });

  it('erases nothing when nothing was drawn', () => {
    const tty = terminal();
    new JobProgressLine(tty).stop();
    expect(tty.writes).toEqual([]);
  });

  it('is offered only on a terminal, not with --json or --no-progress, nor on a dumb terminal', () => {
    expect(jobProgressLine(io(terminal()), {})).toBeInstanceOf(JobProgressLine);
    expect(jobProgressLine(io({ write: () => true }), {})).toBeNull();
    expect(jobProgressLine(io(terminal()), { json: true })).toBeNull();
    expect(jobProgressLine(io(terminal()), { progress: false })).toBeNull();
    expect(jobProgressLine(io(terminal(), { TERM: 'dumb' }), {})).toBeNull();
  });
});
