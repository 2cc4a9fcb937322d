import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { ServiceError } from '../../src/errors.js';
import { LOG_LEVELS, type LogFilters, type LogLevel, type LogRecord } from '../../src/services/logs/index.js';
import { LogsView, POLL_LIMIT } from '../../src/cli/logs-view.js';
import type { LogSource } from '../../src/cli/logs-source.js';
import { initState, reduce, visible, type ViewFilters } from '../../src/cli/logs-store.js';
import { expectPlain, HOSTILE, HOSTILE_SHOWN } from '../helpers/terminal.js';

// An in-memory log with the service's contract: newest first (or oldest first), filtered, paged.
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
    const min = filters.min_level ? LOG_LEVELS.indexOf(filters.min_level) : 0;
    const matching = this.entries
      .filter((e) => LOG_LEVELS.indexOf(e.level) >= min && (!filters.source || e.source === filters.source))
      .filter((e) => !filters.search || e.message.includes(filters.search))
      .filter((e) => filters.after_id === undefined || e.id > filters.after_id)
      .sort((a, b) => (filters.order === 'asc' ? a.id - b.id : b.id - a.id));
    const start = (filters.page - 1) * filters.per_page;
    return { items: matching.slice(start, start + filters.per_page), total: matching.length };
  }

  async sources(): Promise<string[]> {
    return [...new Set(this.entries.map((e) => e.source))].sort();
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
const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  pageUp: '\u001B[5~',
  pageDown: '\u001B[6~',
  home: '\u001B[H',
  end: '\u001B[F',
  enter: '\r',
  escape: '\u001B',
  backspace: '\u007F',
};

function mount(source: FakeSource, initial: ViewFilters = {}, onExit?: () => void, rows = 13) {
  const app = render(<LogsView source={source} initial={initial} pollMs={20} rows={rows} onExit={onExit} />);
  const screen = () => strip(app.lastFrame());
  const shows = (text: string) => waitFor(() => screen().includes(text), JSON.stringify(text));
  const press = async (key: string) => {
    app.stdin.write(key);
    await delay(15);
  };
  return { ...app, screen, shows, press };
}

afterEach(() => {
  cleanup();
});

describe('cashtrack logs view', () => {
  it('shows the newest entries that fit the terminal, oldest first, with level, source, message and context', async () => {
    const source = new FakeSource();
    source.add(249);
    source.add(1, { level: 'error', source: 'postback', context: { order: 7 } });
    const view = mount(source);

    await view.shows('<250>');
    const out = view.screen();
    // 13 rows: 10 for the list, 3 for the bars.
    expect(out).toContain('<241>');
    expect(out).not.toContain('<240>');
    expect(out.indexOf('<249>')).toBeLessThan(out.indexOf('<250>'));
    expect(out).toContain('2026-01-01T00:04:10.000Z ERROR   [postback] <250> {"order":7}');
    expect(out).toContain('live · 250 matching');
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
    await delay(60);
    const out = view.screen();
    for (const id of [1, 2, 3, 4, 5]) expect(out.split(`<${id}>`).length - 1).toBe(1);
  });

  it('l cycles the minimum level: info, warning (warnings and errors), error, then all', async () => {
    const source = new FakeSource();
    source.add(1, { level: 'debug', message: 'dbg' });
    source.add(1, { level: 'warning', message: 'warn' });
    source.add(1, { level: 'error', message: 'err' });
    const view = mount(source);
    await view.shows('err');

    await view.press('l');
    await view.shows('filter: level≥info');
    await view.press('l');
    await view.shows('filter: level≥warning');
    await waitFor(() => !view.screen().includes('dbg') && view.screen().includes('warn') && view.screen().includes('err'), 'warnings and errors only');
    expect(source.calls.some((c) => c.min_level === 'warning')).toBe(true);
    await view.press('l');
    await view.shows('filter: level≥error');
    await waitFor(() => !view.screen().includes('warn'), 'errors only');
    await view.press('l');
    await view.shows('filter: all');
    await view.shows('dbg');
  });

  it('s opens a picker of the sources present; Enter filters by the chosen one, and "all sources" clears it', async () => {
    const source = new FakeSource();
    source.add(1, { source: 'auth', message: 'from auth' });
    source.add(1, { source: 'jobs', message: 'from jobs' });
    const view = mount(source);
    await view.shows('from jobs');

    await view.press('s');
    await view.shows('(all sources)');
    expect(view.screen()).toContain('auth');
    await view.press(KEY.down);
    await view.press(KEY.down);
    await view.press(KEY.enter);
    await view.shows('filter: source=jobs');
    await waitFor(() => !view.screen().includes('from auth'), 'jobs only');

    await view.press('s');
    await view.shows('(all sources)');
    await view.press(KEY.up);
    await view.press(KEY.up);
    await view.press(KEY.up);
    await view.press(KEY.enter);
    await view.shows('filter: all');
    await view.shows('from auth');
  });

  it('/ then typing then Enter searches for the typed text; Esc cancels; q typed there is text', async () => {
    const source = new FakeSource();
    source.add(2);
    source.add(1, { message: 'payout failed' });
    const onExit = vi.fn();
    const view = mount(source, {}, onExit);
    await view.shows('<2>');

    await view.press('/');
    for (const ch of 'failx') await view.press(ch);
    await view.press(KEY.backspace);
    await view.shows('search: fail');
    await view.press(KEY.enter);
    await waitFor(() => source.calls.some((c) => c.search === 'fail'), 'a query with search "fail"');
    await view.shows('filter: search="fail"');
    await waitFor(() => !view.screen().includes('<2>'), 'only the match');
    expect(source.calls.some((c) => c.search === 'failx')).toBe(false);

    await view.press('/');
    await view.press('q');
    await view.press(KEY.escape);
    await view.shows('filter: search="fail"');
    expect(onExit).not.toHaveBeenCalled();
  });

  it('c clears level, source and search but keeps the time range from the command line', async () => {
    const source = new FakeSource();
    source.add(1, { level: 'error' });
    source.add(1);
    const after = new Date(Date.UTC(2025, 0, 1));
    const view = mount(source, { min_level: 'error', source: 'api', after });
    await view.shows('<1>');
    expect(view.screen()).toContain('filter: level≥error source=api since 2025-01-01T00:00:00.000Z');
    await view.press('c');
    await view.shows('filter: since 2025-01-01T00:00:00.000Z');
    // Once the entry only the cleared filters match is shown, no poll under the old ones can follow.
    await view.shows('<2>');
    expect(source.calls.at(-1)).toMatchObject({ after });
    expect(source.calls.at(-1)).not.toHaveProperty('source');
  });

  it('space pauses: new entries are counted, not shown, until it resumes', async () => {
    const source = new FakeSource();
    source.add(20);
    const view = mount(source);
    await view.shows('<20>');
    await view.press(' ');
    await view.shows('paused · line 20/20');
    source.add(3);
    await view.shows('paused · 3 new');
    expect(view.screen()).not.toContain('<23>');
    expect(view.screen()).toContain('<20>');
    await view.press('p');
    await view.shows('<23>');
    expect(view.screen()).toContain('live');
  });

  it('scrolls back with PgUp, Home and arrows, forward with PgDn, and End returns to live', async () => {
    const source = new FakeSource();
    source.add(100);
    const view = mount(source);
    await view.shows('<100>');

    await view.press(KEY.pageUp);
    await view.shows('paused · line 90/100');
    expect(view.screen()).toContain('<81>');
    expect(view.screen()).not.toContain('<100>');
    await view.press(KEY.home);
    await view.shows('line 1/100');
    expect(view.screen()).toContain('<1>');
    expect(view.screen()).not.toContain('<11>');
    await view.press(KEY.down);
    await view.shows('line 2/100');
    await view.press(KEY.pageDown);
    await view.shows('line 12/100');
    expect(view.screen()).toContain('<12>');
    await view.press(KEY.up);
    await view.shows('line 11/100');
    await view.press(KEY.end);
    await view.shows('live · 100 matching');
    expect(view.screen()).toContain('<100>');
  });

  it("Enter opens the selected entry's full context pretty-printed with its request id; Esc closes it", async () => {
    const source = new FakeSource();
    source.add(1, { message: 'postback refused', request_id: 'r-42', context: { network: 'awin', reasons: ['bad_signature'] } });
    source.add(1);
    const view = mount(source, {}, undefined, 20);
    await view.shows('<2>');
    await view.press(KEY.up);
    await view.shows('line 1/2');
    await view.press(KEY.enter);
    await view.shows('entry 1 · request r-42');
    const out = view.screen();
    expect(out).toContain('"message": "postback refused"');
    expect(out).toContain('"network": "awin"');
    expect(out).toContain('"bad_signature"');
    await view.press(KEY.escape);
    await view.shows('<2>');
    expect(view.screen()).not.toContain('entry 1 ·');
  });

  it('? shows every key; Esc closes it', async () => {
    const source = new FakeSource();
    source.add(1);
    const view = mount(source, {}, undefined, 24);
    await view.shows('<1>');
    await view.press('?');
    await view.shows('keys');
    for (const word of ['PgUp PgDn', 'Home', 'End', 'Enter', 'pause', 'minimum level', 'choose a source', 'search', 'quit'])
      expect(view.screen()).toContain(word);
    await view.press(KEY.escape);
    await view.shows('<1>');
  });

  it('keeps the status and filter bars on the last rows when few entries match and while help is open', async () => {
    const source = new FakeSource();
    source.add(1);
    const rows = 24;
    const view = mount(source, {}, undefined, rows);
    await view.shows('<1>');
    // The list takes rows - 3; the status bar and the filter bar are the two rows after it.
    const bars = () => {
      const lines = view.screen().split('\n');
      return { status: lines.findIndex((l) => l.startsWith('live ·')), filter: lines.findIndex((l) => l.startsWith('filter:')) };
    };
    expect(bars()).toEqual({ status: rows - 3, filter: rows - 2 });
    await view.press('?');
    await view.shows('keys');
    expect(bars()).toEqual({ status: rows - 3, filter: rows - 2 });
  });

  it('shows an entry holding escape sequences and control characters as plain text: in the list, its details and the source picker', async () => {
    const source = new FakeSource();
    source.add(1, { source: `src${HOSTILE}`, message: `msg ${HOSTILE}`, context: { agent: HOSTILE, c1: '\u009b2J\u009d' } });
    source.failures.push(new ServiceError('svc_database_unavailable', `down ${HOSTILE}`, 503));
    const view = mount(source, { search: `find ${HOSTILE}` }, undefined, 20);
    // Ink's own colours are the only sequences allowed in a frame.
    const raw = () => (view.lastFrame() ?? '').replace(/\u001B\[[0-9;]*m/g, '');
    await view.shows(`poll failed: svc_database_unavailable: down ${HOSTILE_SHOWN}`);
    expectPlain(raw());
    source.failures.length = 0;
    await view.press('c');
    await view.shows(`msg ${HOSTILE_SHOWN}`);
    expectPlain(raw());
    await view.press(KEY.up);
    await view.press(KEY.enter);
    await view.shows('entry 1');
    expectPlain(raw());
    // The details are JSON with every control escaped, C1 included.
    expect(view.screen()).toContain('"message": "msg A\\u001b]52;c;ZXZpbA==\\u0007B');
    expect(view.screen()).toContain('"c1": "\\u009b2J\\u009d"');
    await view.press(KEY.escape);
    await view.press('s');
    await view.shows(`src${HOSTILE_SHOWN}`);
    expectPlain(raw());
  });

  it('q calls onExit', async () => {
    const source = new FakeSource();
    const onExit = vi.fn();
    const view = mount(source, {}, onExit);
    await view.shows('no entries match');
    await view.press('q');
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

  it('notes the gap when more entries arrive between polls than it will fetch', async () => {
    const source = new FakeSource();
    source.add(1);
    const view = mount(source, {}, undefined, 60);
    await view.shows('<1>');
    source.add(POLL_LIMIT + 50);
    await view.shows(`<${source.entries.length}>`);
    await view.press(KEY.home);
    await view.shows('older ones skipped');
  });

  it('stops polling once unmounted', async () => {
    const source = new FakeSource();
    const view = mount(source);
    await view.shows('live');
    view.unmount();
    await delay(10);
    const calls = source.calls.length;
    await delay(80);
    expect(source.calls.length).toBe(calls);
  });
});

describe('the view store', () => {
  const entry = (id: number): LogRecord => ({
    id,
    time: '2026-01-01T00:00:00.000Z',
    level: 'info' as LogLevel,
    source: 'api',
    message: `<${id}>`,
    context: null,
    request_id: null,
  });

  it('holds at most its cap however many entries arrive, counting those dropped', () => {
    let state = initState({}, 10, 2000);
    const filters = state.filters;
    for (let at = 1; at <= 100_000; at += 500) {
      state = reduce(state, { type: 'loaded', filters, lines: Array.from({ length: 500 }, (_, i) => entry(at + i)), total: at + 499, at: new Date() });
      expect(state.lines.length).toBeLessThanOrEqual(2000);
    }
    expect(state.lines.length).toBe(2000);
    expect(state.dropped).toBe(98_000);
    expect(visible(state).lines.map((l) => ('entry' in l ? l.entry.id : 0))).toEqual(Array.from({ length: 10 }, (_, i) => 99_991 + i));
  });

  it('keeps a paused view on the same lines while the front of the history is dropped', () => {
    let state = initState({}, 5, 100);
    const filters = state.filters;
    state = reduce(state, { type: 'loaded', filters, lines: Array.from({ length: 100 }, (_, i) => entry(i + 1)), total: 100, at: new Date() });
    state = reduce(state, { type: 'key', input: '', key: { pageUp: true } });
    const before = visible(state).lines.map((l) => ('entry' in l ? l.entry.id : 0));
    state = reduce(state, { type: 'loaded', filters, lines: Array.from({ length: 30 }, (_, i) => entry(101 + i)), total: 130, at: new Date() });
    expect(visible(state).lines.map((l) => ('entry' in l ? l.entry.id : 0))).toEqual(before);
    expect(state.unseen).toBe(30);
  });

  it('ignores a poll that started under other filters', () => {
    let state = initState({}, 5);
    const stale = state.filters;
    state = reduce(state, { type: 'key', input: 'l', key: {} });
    const after = reduce(state, { type: 'loaded', filters: stale, lines: [entry(1)], total: 1, at: new Date() });
    expect(after).toBe(state);
  });
});
