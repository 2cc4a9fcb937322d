import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { ServiceError } from '../../src/errors.js';
import type { LogFilters, LogLevel, LogRecord } from '../../src/services/logs.js';
import { appendLines, emptyBuffer, LogsView, MAX_LINES, POLL_LIMIT, type LogSource } from '../../src/cli/logs-view.js';

// An in-memory log with the service's contract: newest first, filtered, paged.
class FakeSource implements LogSource {
  entries: LogRecord[] = [];
  calls: LogFilters[] = [];
  failures: Error[] = [];

  add(count: number, fields: Partial<LogRecord> = {}): void {
    for (let i = 0; i < count; i++) {
      const id = this.entries.length + 1;
      this.entries.push({
        id,
        time: new Date(Date.UTC(2026, 0, 1) + id * 1000).toISOString(),
        level: 'info',
        source: 'api',
        message: `<${id}>`,
        context: null,
        request_id: null,
        ...fields,
      });
    }
  }

  async list(filters: LogFilters): Promise<{ items: LogRecord[]; total: number }> {
    this.calls.push(filters);
    const failure = this.failures.shift();
    if (failure) throw failure;
    const matching = this.entries
      .filter((e) => (!filters.level || e.level === filters.level) && (!filters.source || e.source === filters.source))
      .filter((e) => !filters.search || e.message.includes(filters.search))
      .sort((a, b) => b.id - a.id);
    const start = (filters.page - 1) * filters.per_page;
    return { items: matching.slice(start, start + filters.per_page), total: matching.length };
  }
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}

const strip = (s: string | undefined) => (s ?? '').replace(/\u001B\[[0-9;]*m/g, '');

function mount(source: FakeSource, initial: { level?: LogLevel; source?: string; search?: string } = {}, onExit?: () => void) {
  const app = render(<LogsView source={source} initial={initial} pollMs={20} onExit={onExit} />);
  const screen = () => strip(app.lastFrame());
  const shows = (text: string) => waitFor(() => screen().includes(text), JSON.stringify(text));
  return { ...app, screen, shows };
}

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

afterEach(() => {
  cleanup();
});

describe('cashtrack logs view', () => {
  it('prints the newest 200 entries oldest-first with level, source, message and context', async () => {
    const source = new FakeSource();
    source.add(249);
    source.add(1, { level: 'error', source: 'postback', context: { order: 7 } });
    const view = mount(source);

    await view.shows('<250>');
    const out = view.screen();
    expect(out).not.toContain('<50>');
    expect(out.indexOf('<51>')).toBeGreaterThanOrEqual(0);
    expect(out.indexOf('<51>')).toBeLessThan(out.indexOf('<52>'));
    expect(out.indexOf('<249>')).toBeLessThan(out.indexOf('<250>'));
    expect(out).toContain('2026-01-01T00:04:10.000Z ERROR   [postback] <250> {"order":7}');
    expect(out).toContain('watching · 250 matching');
    expect(source.calls[0]).toMatchObject({ page: 1, per_page: 100 });
    expect(source.calls.every((c) => c.per_page <= 100)).toBe(true);
  });

  it('appends entries that arrive later on the next poll, each once', async () => {
    const source = new FakeSource();
    source.add(3);
    const view = mount(source);
    await view.shows('<3>');

    source.add(2);
    await view.shows('<5>');
    await delay(60); // a few more polls must not print them again
    const out = view.screen();
    for (const id of [1, 2, 3, 4, 5]) expect(occurrences(out, `<${id}>`)).toBe(1);
    expect(out.indexOf('<3>')).toBeLessThan(out.indexOf('<4>'));
  });

  it('pressing l cycles the level filter, queries the source with it and prints a separator', async () => {
    const source = new FakeSource();
    source.add(2);
    source.add(1, { level: 'debug', message: 'only-debug' });
    const view = mount(source);
    await view.shows('<2>');

    view.stdin.write('l');
    await waitFor(() => source.calls.some((c) => c.level === 'debug'), 'a query with level debug');
    await view.shows('── filter: level=debug ──');
    const out = view.screen();
    expect(out.lastIndexOf('only-debug')).toBeGreaterThan(out.indexOf('── filter: level=debug ──'));
    expect(out.lastIndexOf('<2>')).toBeLessThan(out.indexOf('── filter: level=debug ──'));
    expect(out).toContain('watching · 1 matching');

    view.stdin.write('l');
    await waitFor(() => source.calls.some((c) => c.level === 'info'), 'a query with level info');
  });

  it('/ then typing then Enter searches for the typed text', async () => {
    const source = new FakeSource();
    source.add(2);
    source.add(1, { message: 'payout failed' });
    const view = mount(source);
    await view.shows('<2>');

    view.stdin.write('/');
    for (const ch of 'failx') view.stdin.write(ch);
    view.stdin.write('\u007F'); // backspace
    await view.shows('search: fail');
    view.stdin.write('\r');

    await waitFor(() => source.calls.some((c) => c.search === 'fail'), 'a query with search "fail"');
    await view.shows('── filter: search="fail" ──');
    expect(source.calls.some((c) => c.search === 'failx')).toBe(false);
  });

  it('Esc leaves search mode without changing the filters, and q typed there is text', async () => {
    const source = new FakeSource();
    source.add(1);
    const onExit = vi.fn();
    const view = mount(source, {}, onExit);
    await view.shows('<1>');

    view.stdin.write('/');
    view.stdin.write('q');
    await view.shows('search: q');
    view.stdin.write('\u001B');
    await view.shows('filter: all');
    await delay(60);

    expect(onExit).not.toHaveBeenCalled();
    expect(source.calls.every((c) => c.search === undefined)).toBe(true);
  });

  it('c clears the filters given on the command line', async () => {
    const source = new FakeSource();
    source.add(1, { level: 'error' });
    source.add(1);
    const view = mount(source, { level: 'error', source: 'api' });
    await view.shows('<1>');
    expect(view.screen()).toContain('filter: level=error source=api');

    view.stdin.write('c');
    await view.shows('── filter: all ──');
    expect(source.calls.at(-1)).not.toHaveProperty('level');
    expect(source.calls.at(-1)).not.toHaveProperty('source');
    await view.shows('<2>');
  });

  it('q calls onExit', async () => {
    const source = new FakeSource();
    const onExit = vi.fn();
    const view = mount(source, {}, onExit);
    await view.shows('watching · 0 matching');

    view.stdin.write('q');
    await waitFor(() => onExit.mock.calls.length === 1, 'onExit');
  });

  it('a failing poll shows the error code and the view keeps polling', async () => {
    const source = new FakeSource();
    source.add(1);
    const view = mount(source);
    await view.shows('<1>');

    source.failures.push(new ServiceError('svc_database_unavailable', 'Cannot reach the database.', 503));
    await view.shows('poll failed: svc_database_unavailable: Cannot reach the database.');

    source.add(1);
    await view.shows('<2>');
    expect(view.screen()).not.toContain('poll failed');
  });

  it('retries the first load when it fails', async () => {
    const source = new FakeSource();
    source.add(1);
    source.failures.push(new Error('boom'));
    const view = mount(source);

    await view.shows('<1>');
    expect(view.frames.some((f) => strip(f).includes('poll failed: boom'))).toBe(true);
  });

  it('keeps printing every entry exactly once after more than 1000 have arrived', async () => {
    const source = new FakeSource();
    source.add(200);
    const view = mount(source);
    await view.shows('<200>');

    for (let round = 0; round < 4; round++) {
      source.add(300);
      await view.shows(`<${source.entries.length}>`);
    }
    const out = view.screen();
    expect(source.entries.length).toBeGreaterThan(MAX_LINES);
    const missingOrRepeated = source.entries.filter((e) => occurrences(out, e.message) !== 1).map((e) => e.id);
    expect(missingOrRepeated).toEqual([]);
  });

  it('notes the gap when more entries arrive between polls than it will fetch', async () => {
    const source = new FakeSource();
    source.add(1);
    const view = mount(source);
    await view.shows('<1>');

    source.add(POLL_LIMIT + 50);
    const newest = source.entries.length;
    await view.shows(`<${newest}>`);
    const out = view.screen();
    expect(out).toContain(`more than ${POLL_LIMIT} new entries since the last poll; older ones skipped`);
    expect(out).not.toContain(`<${newest - POLL_LIMIT}>`);
    expect(out.indexOf('older ones skipped')).toBeLessThan(out.indexOf(`<${newest - POLL_LIMIT + 1}>`));
  });

  it('stops polling once unmounted', async () => {
    const source = new FakeSource();
    const view = mount(source);
    await view.shows('watching');
    view.unmount();
    await delay(10);
    const calls = source.calls.length;
    await delay(80);
    expect(source.calls.length).toBe(calls);
  });
});

describe('the line buffer', () => {
  it('never holds more than 1000 lines, and starts a new page with only the new lines past the cap', () => {
    const source = new FakeSource();
    source.add(2500);
    let buffer = emptyBuffer;
    let printed = 0;
    for (let at = 0; at < source.entries.length; at += 130) {
      const batch = source.entries.slice(at, at + 130);
      const before = buffer;
      buffer = appendLines(buffer, batch);
      expect(buffer.lines.length).toBeLessThanOrEqual(MAX_LINES);
      // Whatever <Static> would print next is exactly this batch.
      const fresh = buffer.page === before.page ? buffer.lines.slice(before.lines.length) : buffer.lines;
      expect(fresh.map((l) => ('entry' in l ? l.entry.id : -1))).toEqual(batch.map((e) => e.id));
      printed += fresh.length;
    }
    expect(printed).toBe(2500);
    expect(buffer.page).toBeGreaterThan(0);
  });
});
