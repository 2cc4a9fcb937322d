// `cashtrack logs` on a terminal. Finished lines are printed once through Ink's <Static> (the
// terminal's scrollback keeps them); the status and the filter bar stay live below.
import { useEffect, useReducer } from 'react';
import { Box, Static, Text, render, useApp, useInput, type Key } from 'ink';
import type { Context } from '../context.js';
import { LOG_LEVELS, type LogFilters, type LogLevel, type LogRecord } from '../services/logs.js';
import { formatLine } from './commands/logs.js';

/** What the view reads from; `LogService` is one. */
export interface LogSource {
  list(filters: LogFilters): Promise<{ items: LogRecord[]; total: number }>;
}

export interface ViewFilters {
  level?: LogLevel;
  source?: string;
  search?: string;
}

/** Most lines held in memory; older ones are already on the terminal. */
export const MAX_LINES = 1000;
const INITIAL_LINES = 200;
const PER_PAGE = 100; // the service's largest page
/** Most new entries one poll fetches (five queries); a burst beyond it is noted, not printed. */
export const POLL_LIMIT = 500;
const GAP_NOTE = `… more than ${POLL_LIMIT} new entries since the last poll; older ones skipped`;

// --- The bounded line store ---

export type Line = { key: number; entry: LogRecord } | { key: number; note: string };

export interface LineBuffer {
  /** Changes when the cap is reached; <Static> is keyed on it. */
  page: number;
  lines: Line[];
  next: number;
}

export const emptyBuffer: LineBuffer = { page: 0, lines: [], next: 0 };

/**
 * Appends a batch, holding at most `cap` lines. <Static> remembers how much it printed by array
 * length, so trimming the front in place would stop it printing; past the cap a new page starts
 * holding only the new lines, and the remounted <Static> prints just those.
 */
export function appendLines(buffer: LineBuffer, add: Array<LogRecord | string>, cap = MAX_LINES): LineBuffer {
  if (add.length === 0) return buffer;
  let next = buffer.next;
  const fresh = add.slice(-cap).map((item): Line => (typeof item === 'string' ? { key: next++, note: item } : { key: next++, entry: item }));
  if (buffer.lines.length + fresh.length <= cap) return { page: buffer.page, lines: [...buffer.lines, ...fresh], next };
  return { page: buffer.page + 1, lines: fresh, next };
}

// --- Loading ---

interface Batch {
  items: LogRecord[];
  total: number;
  /** True when `limit` ran out before reaching `afterId`. */
  truncated: boolean;
}

/** Entries with id > `afterId`, at most `limit`, oldest first. Pages newest-first until it meets `afterId`. */
async function fetchSince(source: LogSource, filters: ViewFilters, afterId: number, limit: number): Promise<Batch> {
  const found = new Map<number, LogRecord>(); // pages can overlap when rows arrive between calls
  let total = 0;
  for (let page = 1; page <= Math.ceil(limit / PER_PAGE); page++) {
    const { items, total: n } = await source.list({ ...filters, page, per_page: PER_PAGE });
    if (page === 1) total = n;
    let reached = items.length < PER_PAGE;
    for (const e of items) {
      if (e.id > afterId) found.set(e.id, e);
      else reached = true;
    }
    if (reached) return { items: sortById(found), total, truncated: false };
  }
  return { items: sortById(found).slice(-limit), total, truncated: true };
}

function sortById(found: Map<number, LogRecord>): LogRecord[] {
  return [...found.values()].sort((a, b) => a.id - b.id);
}

function describeError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

// --- View state ---

interface State {
  filters: ViewFilters;
  /** The search being typed; null outside search mode. */
  draft: string | null;
  buffer: LineBuffer;
  total: number | null;
  lastPoll: Date | null;
  error: string | null;
  quitting: boolean;
}

type Action =
  | { type: 'loaded'; filters: ViewFilters; reload: boolean; lines: Array<LogRecord | string>; total: number; at: Date }
  | { type: 'failed'; filters: ViewFilters; error: string; at: Date }
  | { type: 'key'; input: string; key: Key };

function reduce(state: State, action: Action): State {
  switch (action.type) {
    case 'loaded': {
      // A poll that started before the filters changed must not print under the new ones.
      if (action.filters !== state.filters) return state;
      const lines = action.reload && state.buffer.next > 0 ? [separator(state.filters), ...action.lines] : action.lines;
      return { ...state, buffer: appendLines(state.buffer, lines), total: action.total, lastPoll: action.at, error: null };
    }
    case 'failed':
      return action.filters === state.filters ? { ...state, error: action.error, lastPoll: action.at } : state;
    case 'key':
      return onKey(state, action.input, action.key);
  }
}

// Keys are reduced here rather than in the useInput callback, which can be a render behind.
function onKey(state: State, input: string, key: Key): State {
  if (key.ctrl && input === 'c') return { ...state, quitting: true };
  if (state.draft !== null) {
    if (key.return) return withFilters({ ...state, draft: null }, { ...state.filters, search: state.draft || undefined });
    if (key.escape) return { ...state, draft: null };
    if (key.backspace || key.delete) return { ...state, draft: state.draft.slice(0, -1) };
    if (input && !key.ctrl && !key.meta) return { ...state, draft: state.draft + input };
    return state;
  }
  if (key.ctrl || key.meta) return state;
  if (input === 'q') return { ...state, quitting: true };
  if (input === 'l') return withFilters(state, { ...state.filters, level: nextLevel(state.filters.level) });
  if (input === '/') return { ...state, draft: state.filters.search ?? '' };
  if (input === 'c') return withFilters(state, {});
  return state;
}

function withFilters(state: State, next: ViewFilters): State {
  const filters: ViewFilters = {};
  if (next.level) filters.level = next.level;
  if (next.source) filters.source = next.source;
  if (next.search) filters.search = next.search;
  const same = filters.level === state.filters.level && filters.source === state.filters.source && filters.search === state.filters.search;
  return same ? state : { ...state, filters, total: null, error: null };
}

function nextLevel(level: LogLevel | undefined): LogLevel | undefined {
  return level === undefined ? LOG_LEVELS[0] : LOG_LEVELS[LOG_LEVELS.indexOf(level) + 1];
}

function describeFilters(f: ViewFilters): string {
  const parts: string[] = [];
  if (f.level) parts.push(`level=${f.level}`);
  if (f.source) parts.push(`source=${f.source}`);
  if (f.search) parts.push(`search=${JSON.stringify(f.search)}`);
  return parts.length ? parts.join(' ') : 'all';
}

function separator(f: ViewFilters): string {
  return `── filter: ${describeFilters(f)} ──`;
}

function initState(initial: ViewFilters): State {
  const empty: State = { filters: {}, draft: null, buffer: emptyBuffer, total: null, lastPoll: null, error: null, quitting: false };
  return withFilters(empty, initial);
}

// --- Components ---

const LEVEL_COLOR: Record<LogLevel, string | undefined> = { error: 'red', warning: 'yellow', info: undefined, debug: 'gray' };

function LineView({ line }: { line: Line }) {
  if ('note' in line) return <Text dimColor>{line.note}</Text>;
  return <Text color={LEVEL_COLOR[line.entry.level]}>{formatLine(line.entry)}</Text>;
}

function StatusBar({ state }: { state: State }) {
  const polled = state.lastPoll ? ` · last poll ${state.lastPoll.toISOString().slice(11, 19)}` : '';
  return (
    <Box flexDirection="column">
      {state.error && <Text color="red">poll failed: {state.error}</Text>}
      <Text dimColor>{state.total === null ? 'loading' : `watching · ${state.total} matching`}{polled}</Text>
    </Box>
  );
}

function FilterBar({ filters, draft }: { filters: ViewFilters; draft: string | null }) {
  if (draft !== null) {
    return (
      <Text>
        <Text bold>search: </Text>
        {draft}
        <Text inverse> </Text>
        <Text dimColor>  Enter apply · Esc cancel</Text>
      </Text>
    );
  }
  return (
    <Text>
      <Text bold>filter: {describeFilters(filters)}</Text>
      <Text dimColor>  l level · / search · c clear · q quit</Text>
    </Text>
  );
}

export interface LogsViewProps {
  source: LogSource;
  initial: ViewFilters;
  pollMs?: number;
  onExit?: () => void;
}

/** The live log: loads the newest entries for the filters, then polls for newer ones. */
export function LogsView({ source, initial, pollMs = 1000, onExit }: LogsViewProps) {
  const { exit } = useApp();
  const [state, dispatch] = useReducer(reduce, initial, initState);
  const { filters, quitting } = state;

  useInput((input, key) => dispatch({ type: 'key', input, key }));

  useEffect(() => {
    if (!quitting) return;
    onExit?.();
    exit();
  }, [quitting, onExit, exit]);

  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let lastId: number | null = null; // null until the first load for these filters succeeds
    const tick = async () => {
      try {
        const batch = await fetchSince(source, filters, lastId ?? 0, lastId === null ? INITIAL_LINES : POLL_LIMIT);
        if (stopped) return;
        const lines: Array<LogRecord | string> = lastId !== null && batch.truncated ? [GAP_NOTE, ...batch.items] : batch.items;
        dispatch({ type: 'loaded', filters, reload: lastId === null, lines, total: batch.total, at: new Date() });
        lastId = batch.items.at(-1)?.id ?? lastId ?? 0;
      } catch (err) {
        if (stopped) return;
        dispatch({ type: 'failed', filters, error: describeError(err), at: new Date() });
      }
      // A timeout per poll, not an interval, so a slow database never has two polls in flight.
      timer = setTimeout(() => void tick(), pollMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [source, filters, pollMs]);

  return (
    <>
      <Static key={state.buffer.page} items={state.buffer.lines}>
        {(line) => <LineView key={line.key} line={line} />}
      </Static>
      <StatusBar state={state} />
      <FilterBar filters={filters} draft={state.draft} />
    </>
  );
}

/** Runs the view on the terminal until the user quits (`q`, Ctrl-C). */
export async function runLogsView(ctx: Context, filters: ViewFilters): Promise<void> {
  const app = render(<LogsView source={ctx.logger} initial={filters} />);
  try {
    await app.waitUntilExit();
  } finally {
    app.unmount();
  }
}
