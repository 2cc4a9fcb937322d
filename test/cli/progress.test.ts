import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { estimateRemaining, formatElapsed, JobProgressLine, jobProgressLine, renderProgress } from '../../src/cli/progress.js';

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
    line.update({
      progress: { total: null, done: 1000, failed: 0 },
      checkpoint: {
        done: {},
        current: { network: 'admitad', sync: 1, counts: { pages: 2, seen: 1000, created: 900, updated: 100, deactivated: 0, failed: 0 } },
      },
    });
    now += 62_000;
    line.update({ progress: { total: null, done: 1100, failed: 0 }, checkpoint: { done: { admitad: {} }, current: null } });
    line.stop();
    expect(tty.writes.every((w) => w.startsWith(ERASE))).toBe(true);
    expect(tty.writes.map((w) => w.slice(ERASE.length))).toEqual([
      'advertisers.sync  | 0 advertisers  0s',
      'advertisers.sync admitad  | 1000 advertisers  900 created  100 updated  3s',
      'advertisers.sync admitad  | 1100 advertisers  900 created  100 updated  1 network done  1m05s',
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
    line.update({
      progress: { total: null, done: 1234, failed: 5 },
      checkpoint: { done: {}, current: { network: 'a-network-with-a-long-name', counts: { created: 1 } } },
    });
    line.stop();
    for (const w of tty.writes) expect(w.length - ERASE.length).toBeLessThanOrEqual(29);
    expect(tty.writes[1]).toMatch(/~$/);
  });

  it('shows a bar when the job knows its total, and failures', () => {
    const text = renderProgress({
      type: 'orders.poll',
      progress: { total: 40, done: 10, failed: 2 },
      network: 'awin',
      counts: { created: 7, duplicate: 1, failed: 2 },
      networksDone: 0,
      elapsedMs: 9_000,
    });
    expect(text).toBe('orders.poll awin  [#####...............] 10/40 transactions  25%  2 failed  7 created  1 duplicate  9s');
    expect(
      renderProgress({ type: 'other.job', progress: { total: null, done: 1, failed: 0 }, network: null, counts: {}, networksDone: 0, elapsedMs: 0 }, 1),
    ).toBe('other.job  / 1 item  0s');
  });

  it('shows the percentage and the time left at the rate since it started, once the total is known', () => {
    let now = 50_000;
    const tty = terminal(120);
    const line = new JobProgressLine(tty, { now: () => now, tickMs: 0 });
    // Resumed: 100 of the items were handled by an earlier attempt and cost no time here.
    line.start({ type: 'orders.poll', progress: { total: null, done: 100, failed: 0 }, params: { network: 'awin' } });
    now += 4_000;
    line.update({ progress: { total: null, done: 300, failed: 0 } });
    // 200 items in 10 s here: 20 a second, 700 left, 35 s.
    now += 6_000;
    line.update({ progress: { total: 1000, done: 300, failed: 0 } });
    // 650 items in 30 s here: 250 left take 11.5 s at that rate, shown in whole seconds.
    now += 20_000;
    line.update({ progress: { total: 1000, done: 750, failed: 3 } });
    now += 5_000;
    line.update({ progress: { total: 1000, done: 1000, failed: 3 } });
    line.stop();
    expect(tty.writes.map((w) => w.slice(ERASE.length))).toEqual([
      'orders.poll awin  | 100 transactions  0s',
      'orders.poll awin  | 300 transactions  4s',
      'orders.poll awin  [######..............] 300/1000 transactions  30%  ~35s left  10s',
      'orders.poll awin  [###############.....] 750/1000 transactions  75%  ~11s left  3 failed  30s',
      'orders.poll awin  [####################] 1000/1000 transactions  100%  3 failed  35s',
      '',
    ]);
  });

  it('estimates the time left only from items handled here, and not at all without a total', () => {
    expect(estimateRemaining({ total: 100, done: 40, failed: 0 }, 0, 20_000)).toBe(30_000);
    expect(estimateRemaining({ total: 100, done: 40, failed: 0 }, 20, 20_000)).toBe(60_000);
    expect(estimateRemaining({ total: 100, done: 20, failed: 0 }, 20, 20_000)).toBeNull();
    expect(estimateRemaining({ total: null, done: 40, failed: 0 }, 0, 20_000)).toBeNull();
    expect(estimateRemaining({ total: 100, done: 100, failed: 0 }, 0, 20_000)).toBeNull();
    expect(estimateRemaining({ total: 100, done: 1, failed: 0 }, 0, 0)).toBeNull();
    expect(estimateRemaining({ total: 3, done: 1, failed: 0 }, 0, 1_000)).toBe(2_000);
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
