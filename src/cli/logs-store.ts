// The state of `cashtrack logs` on a terminal, apart from Ink: a bounded history of lines (the
// oldest dropped past the cap, however long the view runs), live or paused with a cursor and a
// scroll position, the filters, and the overlay open over the list (search input, source picker,
// one entry's details, help). Everything here is a pure reducer, so keys are reduced against the
// latest state (a useInput callback can be a render behind) and tests drive it without a terminal.
import type { Key } from 'ink';
import { LOG_LEVELS, type LogLevel, type LogRecord } from '../services/logs/index.js';

export interface ViewFilters {
  /** Entries at this level and above. */
  min_level?: LogLevel;
  source?: string;
  search?: string;
  after?: Date;
  before?: Date;
}

/** Most lines held; past it the oldest are dropped (and counted). */
export const HISTORY = 2000;

export type Line = { key: number; entry: LogRecord } | { key: number; note: string };

export type Overlay =
  | { kind: 'search'; draft: string }
  | { kind: 'sources'; options: string[] | null; index: number; error?: string }
  | { kind: 'detail'; entry: LogRecord }
  | { kind: 'help' };

export interface State {
  filters: ViewFilters;
  lines: Line[];
  /** Key of the next line. */
  next: number;
  /** Lines dropped from the front of the history since the filters last changed. */
  dropped: number;
  cap: number;
  total: number | null;
  lastPoll: Date | null;
  error: string | null;
  /** Live follows the newest line; paused keeps the view where it is while lines keep arriving. */
  paused: boolean;
  /** Paused: the selected line and the first line shown (indexes into `lines`). */
  cursor: number;
  top: number;
  /** Lines that arrived since the view was paused. */
  unseen: number;
  /** Rows the list may use. */
  height: number;
  overlay: Overlay | null;
  quitting: boolean;
}

export type Action =
  | { type: 'loaded'; filters: ViewFilters; lines: Array<LogRecord | string>; total: number; at: Date }
  | { type: 'failed'; filters: ViewFilters; error: string; at: Date }
  | { type: 'sources'; options: string[] | null; error?: string }
  | { type: 'resize'; height: number }
  | { type: 'key'; input: string; key: Partial<Key> };

export function initState(filters: ViewFilters, height: number, cap = HISTORY): State {
  return {
    filters: clean(filters),
    lines: [],
    next: 0,
    dropped: 0,
    cap,
    total: null,
    lastPoll: null,
    error: null,
    paused: false,
    cursor: 0,
    top: 0,
    unseen: 0,
    height: Math.max(1, height),
    overlay: null,
    quitting: false,
  };
}

/** The lines on screen: the newest `height` when live, from `top` when paused. */
export function visible(state: State): { lines: Line[]; first: number; selected: number } {
  const first = state.paused ? state.top : Math.max(0, state.lines.length - state.height);
  const selected = state.paused ? state.cursor : state.lines.length - 1;
  return { lines: state.lines.slice(first, first + state.height), first, selected };
}

export function reduce(state: State, action: Action): State {
  switch (action.type) {
    case 'loaded':
      // A poll that started before the filters changed must not show under the new ones.
      if (action.filters !== state.filters) return state;
      return { ...append(state, action.lines), total: action.total, lastPoll: action.at, error: null };
    case 'failed':
      return action.filters === state.filters ? { ...state, error: action.error, lastPoll: action.at } : state;
    case 'sources':
      if (state.overlay?.kind !== 'sources') return state;
      return { ...state, overlay: { ...state.overlay, options: action.options ?? [], ...(action.error ? { error: action.error } : {}) } };
    case 'resize':
      return clampScroll({ ...state, height: Math.max(1, action.height) });
    case 'key':
      return onKey(state, action.input, action.key);
  }
}

function append(state: State, add: Array<LogRecord | string>): State {
  if (add.length === 0) return state;
  let next = state.next;
  const fresh = add.map((item): Line => (typeof item === 'string' ? { key: next++, note: item } : { key: next++, entry: item }));
  let lines = state.lines.concat(fresh);
  const over = Math.max(0, lines.length - state.cap);
  if (over) lines = lines.slice(over);
  const moved = {
    ...state,
    lines,
    next,
    dropped: state.dropped + over,
    unseen: state.paused ? state.unseen + fresh.length : 0,
    cursor: Math.max(0, state.cursor - over),
    top: Math.max(0, state.top - over),
  };
  return moved;
}

function clampScroll(state: State): State {
  const last = Math.max(0, state.lines.length - 1);
  const cursor = Math.min(Math.max(0, state.cursor), last);
  let top = Math.min(state.top, cursor);
  if (cursor >= top + state.height) top = cursor - state.height + 1;
  top = Math.max(0, Math.min(top, Math.max(0, state.lines.length - state.height)));
  return { ...state, cursor, top };
}

/** Pauses where the live view is, with the newest line selected. */
function pause(state: State): State {
  const last = Math.max(0, state.lines.length - 1);
  return { ...state, paused: true, cursor: last, top: Math.max(0, state.lines.length - state.height), unseen: 0 };
}

function move(state: State, delta: number): State {
  const base = state.paused ? state : pause(state);
  return clampScroll({ ...base, cursor: base.cursor + delta, top: delta < -1 || delta > 1 ? base.top + delta : base.top });
}

function onKey(state: State, input: string, key: Partial<Key>): State {
  if (key.ctrl && input === 'c') return { ...state, quitting: true };
  const overlay = state.overlay;
  if (overlay) return onOverlayKey(state, overlay, input, key);
  if (key.upArrow) return move(state, -1);
  if (key.downArrow) return move(state, 1);
  if (key.pageUp) return move(state, -state.height);
  if (key.pageDown) return move(state, state.height);
  if (key.home) return clampScroll({ ...(state.paused ? state : pause(state)), cursor: 0, top: 0 });
  if (key.end) return { ...state, paused: false, unseen: 0 };
  if (key.return) {
    const { selected } = visible(state);
    const line = state.lines[selected];
    return line && 'entry' in line ? { ...state, overlay: { kind: 'detail', entry: line.entry } } : state;
  }
  if (key.ctrl || key.meta) return state;
  switch (input) {
    case 'q':
      return { ...state, quitting: true };
    case '?':
      return { ...state, overlay: { kind: 'help' } };
    case ' ':
    case 'p':
      return state.paused ? { ...state, paused: false, unseen: 0 } : pause(state);
    case 'l':
      return withFilters(state, { ...state.filters, min_level: nextLevel(state.filters.min_level) });
    case 's':
      return { ...state, overlay: { kind: 'sources', options: null, index: 0 } };
    case '/':
      return { ...state, overlay: { kind: 'search', draft: state.filters.search ?? '' } };
    case 'c':
      // Clears level, source and search; the time range came from the command line and stays.
      return withFilters(state, { after: state.filters.after, before: state.filters.before });
    default:
      return state;
  }
}

function onOverlayKey(state: State, overlay: Overlay, input: string, key: Partial<Key>): State {
  const close = { ...state, overlay: null };
  switch (overlay.kind) {
    case 'search':
      if (key.return) return withFilters(close, { ...state.filters, search: overlay.draft || undefined });
      if (key.escape) return close;
      if (key.backspace || key.delete) return { ...state, overlay: { kind: 'search', draft: overlay.draft.slice(0, -1) } };
      if (input && !key.ctrl && !key.meta && overlay.draft.length < 200) return { ...state, overlay: { kind: 'search', draft: overlay.draft + input } };
      return state;
    case 'sources': {
      if (key.escape || input === 'q') return close;
      const count = (overlay.options?.length ?? 0) + 1; // row 0 is "all sources"
      if (key.upArrow) return { ...state, overlay: { ...overlay, index: (overlay.index - 1 + count) % count } };
      if (key.downArrow) return { ...state, overlay: { ...overlay, index: (overlay.index + 1) % count } };
      if (key.return && overlay.options)
        return withFilters(close, { ...state.filters, source: overlay.index === 0 ? undefined : overlay.options[overlay.index - 1] });
      return state;
    }
    case 'detail':
    case 'help':
      if (key.escape || key.return || input === 'q' || input === '?') return close;
      return state;
  }
}

/** New filters start the history over (what is held always matches what the bar says). */
export function withFilters(state: State, next: ViewFilters): State {
  const filters = clean(next);
  const f = state.filters;
  const same =
    filters.min_level === f.min_level && filters.source === f.source && filters.search === f.search && filters.after === f.after && filters.before === f.before;
  if (same) return state;
  return { ...state, filters, lines: [], dropped: 0, total: null, error: null, paused: false, cursor: 0, top: 0, unseen: 0 };
}

function clean(next: ViewFilters): ViewFilters {
  const filters: ViewFilters = {};
  if (next.min_level && next.min_level !== 'debug') filters.min_level = next.min_level;
  if (next.source) filters.source = next.source;
  if (next.search) filters.search = next.search;
  if (next.after) filters.after = next.after;
  if (next.before) filters.before = next.before;
  return filters;
}

/** all → info → warning → error → all (debug and above is everything). */
export function nextLevel(level: LogLevel | undefined): LogLevel | undefined {
  if (level === undefined || level === 'debug') return 'info';
  return LOG_LEVELS[LOG_LEVELS.indexOf(level) + 1];
}

export function describeFilters(f: ViewFilters): string {
  const parts: string[] = [];
  if (f.min_level) parts.push(`level≥${f.min_level}`);
  if (f.source) parts.push(`source=${f.source}`);
  if (f.search) parts.push(`search=${JSON.stringify(f.search)}`);
  if (f.after) parts.push(`since ${f.after.toISOString()}`);
  if (f.before) parts.push(`until ${f.before.toISOString()}`);
  return parts.length ? parts.join(' ') : 'all';
}

/** Every key of the view, as the help overlay lists them. */
export const KEYS: Array<[string, string]> = [
  ['↑ ↓', 'select a line (pauses)'],
  ['PgUp PgDn', 'scroll a page (pauses)'],
  ['Home', 'oldest line held'],
  ['End', 'back to live'],
  ['space, p', 'pause / resume'],
  ['Enter', "open the selected entry's details"],
  ['l', 'minimum level: all, info, warning, error'],
  ['s', 'choose a source'],
  ['/', 'search messages'],
  ['c', 'clear level, source and search'],
  ['?', 'this help'],
  ['Esc', 'close a pane'],
  ['q, Ctrl-C', 'quit'],
];
