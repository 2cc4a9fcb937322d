import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followLogs, parseTime } from '../../src/cli/commands/logs.js';
import type { LogLevel, LogRecord, NewLogEntry } from '../../src/services/logs/index.js';
import { BinaryRunner, requireCurrentBuild, ROOT } from '../helpers/binary.js';
import { runCli } from '../helpers/cli.js';
import { createTestContext, describeEachDialect, destroyTestContext, type TestContext } from '../helpers/context.js';

const MINUTE = 60_000;

function entry(minutesAgo: number, level: LogLevel, message: string, source = 'tests'): NewLogEntry {
  return {
    created_at: new Date(Date.now() - minutesAgo * MINUTE),
    level,
    source,
    message,
    context: JSON.stringify({ minutes_ago: minutesAgo }),
    request_id: null,
  };
}

const messages = (stdout: string) => (JSON.parse(stdout) as LogRecord[]).map((e) => e.message);

describeEachDialect('cashtrack logs over a pipe', (use) => {
  beforeAll(async () => {
    await use().ctx.logger.appendMany([
      entry(180, 'info', 'three hours ago'),
      entry(30, 'warning', 'half an hour ago'),
      entry(5, 'error', 'five minutes ago'),
      entry(1, 'debug', 'a minute ago'),
    ]);
  });

  it('--since takes a duration back from now', async () => {
    const r = await runCli(['logs', '--since', '1h', '--source', 'tests', '--json'], { db: use().db });
    expect(r.code).toBe(0);
    expect(messages(r.stdout)).toEqual(['a minute ago', 'five minutes ago', 'half an hour ago']);
  });

  it('--until and --since together select a window, and accept ISO 8601 times', async () => {
    const until = new Date(Date.now() - 10 * MINUTE).toISOString();
    const r = await runCli(['logs', '--since', '2d', '--until', until, '--source', 'tests', '--json'], { db: use().db });
    expect(messages(r.stdout)).toEqual(['half an hour ago', 'three hours ago']);
  });

  it('--level is a minimum: warning shows warnings and errors', async () => {
    const r = await runCli(['logs', '--level', 'warning', '--source', 'tests'], { db: use().db });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/WARNING {1}\[tests\] half an hour ago \{"minutes_ago":30\}$/);
    expect(lines[1]).toMatch(/ERROR {3}\[tests\] five minutes ago/);
  });

  it('refuses a time it cannot read, and a window that ends before it starts', async () => {
    const bad = await runCli(['logs', '--since', 'yesterday'], { db: use().db });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^svc_usage: --since must be a duration such as 30m/);
    const reversed = await runCli(['logs', '--since', '1h', '--until', '2h'], { db: use().db });
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toMatch(/--since must be earlier than --until/);
    const month = await runCli(['logs', '--until', '2026-13-45'], { db: use().db });
    expect(month.code).toBe(2);
  });

  it('following writes the newest entries, then every new one once and in order, however many arrive at once', async () => {
    const { ctx } = use();
    const seen: LogRecord[] = [];
    const stop = new AbortController();
    const following = followLogs(ctx.logger, { source: 'burst' }, (e) => seen.push(e), { signal: stop.signal, initial: 2, pollMs: 10 });
    await ctx.logger.appendMany(Array.from({ length: 3 }, (_, i) => entry(0, 'info', `before ${i}`, 'burst')));
    await waitFor(() => seen.length >= 2 || seen.some((e) => e.message === 'before 2'));
    await ctx.logger.appendMany(Array.from({ length: 250 }, (_, i) => entry(0, 'info', `burst ${i}`, 'burst')));
    await waitFor(() => seen.some((e) => e.message === 'burst 249'));
    stop.abort();
    await following;
    const burst = seen.filter((e) => e.message.startsWith('burst ')).map((e) => e.message);
    expect(burst).toEqual(Array.from({ length: 250 }, (_, i) => `burst ${i}`));
    const ids = seen.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('--follow --json streams JSON lines from the built binary until SIGTERM', async () => {
    requireCurrentBuild();
    const { ctx, db } = use();
    const runner = new BinaryRunner(db, 'binary-test-secret-0123456789abcdef0123');
    try {
      await ctx.logger.appendMany([entry(0, 'info', 'already there', 'follow')]);
      const child = runner.start(['logs', '--follow', '--json', '--source', 'follow', '--limit', '5']);
      await waitFor(() => child.stdout.includes('already there'), 20_000);
      await ctx.logger.appendMany([entry(0, 'error', 'arrived later', 'follow')]);
      await waitFor(() => child.stdout.includes('arrived later'), 20_000);
      child.process.kill('SIGTERM');
      expect(await child.finished()).toEqual({ code: 0, signal: null });
      const lines = child.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LogRecord);
      expect(lines.map((l) => l.message)).toEqual(['already there', 'arrived later']);
      expect(lines[1]).toMatchObject({ level: 'error', source: 'follow' });
    } finally {
      await runner.killAll();
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('parseTime', () => {
  const now = new Date('2026-11-24T12:00:00Z');
  it('reads durations in seconds, minutes, hours, days and weeks, and ISO times', () => {
    expect(parseTime('90s', now, '--since').toISOString()).toBe('2026-11-24T11:58:30.000Z');
    expect(parseTime('15m', now, '--since').toISOString()).toBe('2026-11-24T11:45:00.000Z');
    expect(parseTime('2h', now, '--since').toISOString()).toBe('2026-11-24T10:00:00.000Z');
    expect(parseTime('1d', now, '--since').toISOString()).toBe('2026-11-23T12:00:00.000Z');
    expect(parseTime('1w', now, '--since').toISOString()).toBe('2026-11-17T12:00:00.000Z');
    expect(parseTime('2026-11-01', now, '--since').toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseTime('2026-11-01T08:30:00+02:00', now, '--since').toISOString()).toBe('2026-11-01T06:30:00.000Z');
  });
  it('refuses anything else', () => {
    for (const bad of ['', 'h', '-1h', '1y', '1.5h', 'now', '2026-11-01T25:00:00Z', '20261101'])
      expect(() => parseTime(bad, now, '--until')).toThrow(/--until must be a duration/);
  });
});

// A real terminal: tmux runs the built binary's interactive view. The pipe tests above cover both
// dialects; what this adds is the terminal itself (colours, keys, the alternate drawing), so SQLite.
describe('cashtrack logs in a real terminal', () => {
  let t: TestContext;
  const socket = `cashtrack-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  beforeAll(async () => {
    t = await createTestContext('sqlite');
  });
  afterAll(async () => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    await destroyTestContext(t);
  });

  it('shows coloured entries, narrows to warnings and errors on l l, and quits on q', async () => {
    requireCurrentBuild();
    await t.ctx.logger.appendMany([entry(3, 'info', 'an info line'), entry(2, 'warning', 'a warning line'), entry(1, 'error', 'an error line')]);
    const env = {
      CASHTRACK_ENV: 'test',
      CASHTRACK_LOG_STDOUT: 'false',
      CASHTRACK_DATABASE_URL: t.db.url,
      CASHTRACK_DATA_DIR: t.db.dataDir,
      CASHTRACK_SECRET: 'tmux-test-secret-0123456789abcdef01234567',
    };
    // Without CI in its environment: in CI, Ink draws nothing until it exits and chalk drops colours.
    const command = `env -u CI -u CONTINUOUS_INTEGRATION ${process.execPath} ${join(ROOT, 'bin/cashtrack')} logs --source tests`;
    execFileSync(
      'tmux',
      [
        '-L',
        socket,
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        'logs',
        '-x',
        '120',
        '-y',
        '30',
        ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        command,
      ],
      { env: { ...process.env, ...env, TERM: 'xterm-256color' } },
    );
    const screen = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'logs');
    await waitFor(() => screen().includes('an error line'), 20_000);
    const coloured = screen(true).split('\n');
    expect(coloured.find((l) => l.includes('an error line'))).toMatch(/\u001B\[(?:[\d;]*;)?31m/);
    expect(coloured.find((l) => l.includes('a warning line'))).toMatch(/\u001B\[(?:[\d;]*;)?33m/);
    expect(screen()).toContain('live · 3 matching');

    tmux('send-keys', '-t', 'logs', 'l');
    await waitFor(() => screen().includes('level≥info'), 10_000);
    tmux('send-keys', '-t', 'logs', 'l');
    await waitFor(() => screen().includes('level≥warning') && !screen().includes('an info line') && screen().includes('a warning line'), 10_000);

    tmux('send-keys', '-t', 'logs', 'q');
    await waitFor(() => spawnSync('tmux', ['-L', socket, 'has-session', '-t', 'logs']).status !== 0, 10_000);
  });
});
