// `cashtrack logs` on a terminal: a thin view over the bounded store in logs-store.ts. It loads the
// newest entries for the filters, polls for newer ones, and draws only the rows that fit the
// terminal (a window over the held history, not every line held), with the status and filter
// bars below and one overlay at a time (search, source picker, an entry's details, help). Every
// text from the log passes terminalLine/terminalJson first: an entry's fields come from requests
// and feeds, and Ink hands escape sequences in a <Text> to the terminal as they are.
import { useEffect, useReducer } from 'react';
import { Box, Text, render, useApp, useInput, useStdout } from 'ink';
import type { Context } from '../context.js';
import type { LogLevel, LogRecord } from '../services/logs/index.js';
import { terminalJson, terminalLine } from '../terminal-text.js';
import { formatLine, PER_PAGE, type LogSource } from './logs-source.js';
import { describeFilters, initState, KEYS, reduce, visible, type Line, type State, type ViewFilters } from './logs-store.js';

/** Entries loaded when the filters change. */
export const INITIAL_LINES = 500;
/** Most new entries one poll fetches (five queries); a burst beyond it is noted, not shown. */
export const POLL_LIMIT = 500;
const GAP_NOTE = `… more than ${POLL_LIMIT} new entries since the last poll; older ones skipped`;
/** Rows kept for the bars below the list. */
const CHROME_ROWS = 3;

// --- Loading ---

interface Batch {
  items: LogRecord[];
  total: number;
  /** True when `limit` ran out before reaching `afterId`. */
  truncated: boolean;
}

/** Entries with id > `afterId`, at most `limit`, oldest first. Pages newest-first until it meets `afterId`. */
export async function fetchSince(source: LogSource, filters: ViewFilters, afterId: number, limit: number): Promise<Batch> {
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

export function describeError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return terminalLine(typeof code === 'string' ? `${code}: ${message}` : message);
}

// --- Components ---

const LEVEL_COLOR: Record<LogLevel, string | undefined> = { error: 'red', warning: 'yellow', info: 'cyan', debug: 'gray' };

function LineView({ line, selected }: { line: Line; selected: boolean }) {
  if ('note' in line)
    return (
      <Text dimColor wrap="truncate-end">
        {line.note}
      </Text>
    );
  return (
    <Text color={LEVEL_COLOR[line.entry.level]} dimColor={line.entry.level === 'debug'} inverse={selected} wrap="truncate-end">
      {formatLine(line.entry)}
    </Text>
  );
}

function ListView({ state }: { state: State }) {
  const { lines, first, selected } = visible(state);
  if (lines.length === 0) return <Text dimColor>{state.total === null ? 'loading…' : 'no entries match'}</Text>;
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <LineView key={line.key} line={line} selected={state.paused && first + i === selected} />
      ))}
    </Box>
  );
}

function DetailView({ entry, height }: { entry: LogRecord; height: number }) {
  const text = terminalJson(
    { id: entry.id, time: entry.time, level: entry.level, source: entry.source, request_id: entry.request_id, message: entry.message, context: entry.context },
    2,
  ).split('\n');
  const room = Math.max(1, height - 1);
  const shown = text.length > room ? [...text.slice(0, room - 1), `… ${text.length - room + 1} more lines`] : text;
  return (
    <Box flexDirection="column">
      <Text bold>
        entry {entry.id}
        {entry.request_id ? ` · request ${entry.request_id}` : ''}
        <Text dimColor> · Esc close</Text>
      </Text>
      {shown.map((l, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one entry, fixed while it is shown.
        <Text key={i} wrap="truncate-end">
          {l}
        </Text>
      ))}
    </Box>
  );
}

function SourcesView({ overlay }: { overlay: Extract<State['overlay'], { kind: 'sources' }> }) {
  if (overlay.options === null) return <Text dimColor>loading sources…</Text>;
  const rows = ['(all sources)', ...overlay.options];
  return (
    <Box flexDirection="column">
      <Text bold>
        source <Text dimColor>↑ ↓ choose · Enter apply · Esc cancel</Text>
      </Text>
      {overlay.error && <Text color="red">could not list sources: {overlay.error}</Text>}
      {rows.map((r, i) => (
        <Text key={r} inverse={i === overlay.index} wrap="truncate-end">
          {terminalLine(r)}
        </Text>
      ))}
    </Box>
  );
}

function HelpView() {
  return (
    <Box flexDirection="column">
      <Text bold>keys</Text>
      {KEYS.map(([k, what]) => (
        <Text key={k}>
          {k.padEnd(12)}
          <Text dimColor>{what}</Text>
        </Text>
      ))}
    </Box>
  );
}

function StatusBar({ state }: { state: State }) {
  const polled = state.lastPoll ? ` · last poll ${state.lastPoll.toISOString().slice(11, 19)}` : '';
  const held = state.dropped ? ` · ${state.dropped} older not held` : '';
  const mode = state.paused ? `paused${state.unseen ? ` · ${state.unseen} new` : ''} · line ${state.cursor + 1}/${state.lines.length}` : 'live';
  return (
    <Box flexDirection="column">
      {state.error && <Text color="red">poll failed: {state.error}</Text>}
      <Text dimColor>
        {state.total === null ? 'loading' : `${mode} · ${state.total} matching`}
        {held}
        {polled}
      </Text>
    </Box>
  );
}

function FilterBar({ state }: { state: State }) {
  const o = state.overlay;
  if (o?.kind === 'search') {
    return (
      <Text>
        <Text bold>search: </Text>
        {terminalLine(o.draft)}
        <Text inverse> </Text>
        <Text dimColor> Enter apply · Esc cancel</Text>
      </Text>
    );
  }
  return (
    <Text wrap="truncate-end">
      <Text bold>filter: {terminalLine(describeFilters(state.filters))}</Text>
      <Text dimColor> ? help · l level · s source · / search · space pause · q quit</Text>
    </Text>
  );
}

export interface LogsViewProps {
  source: LogSource;
  initial: ViewFilters;
  pollMs?: number;
  /** Rows of the terminal (default: the terminal's, else 24). */
  rows?: number;
  /** Lines held at most (default HISTORY). */
  cap?: number;
  onExit?: () => void;
}

/** The live log: loads the newest entries for the filters, then polls for newer ones. */
export function LogsView({ source, initial, pollMs = 1000, rows, cap, onExit }: LogsViewProps) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const terminalRows = rows ?? (stdout.rows || 24);
  const [state, dispatch] = useReducer(reduce, undefined, () => initState(initial, terminalRows - CHROME_ROWS, cap));
  const { filters, quitting } = state;
  const picking = state.overlay?.kind === 'sources' && state.overlay.options === null;

  useInput((input, key) => dispatch({ type: 'key', input, key }));

  useEffect(() => {
    dispatch({ type: 'resize', height: terminalRows - CHROME_ROWS });
  }, [terminalRows]);

  useEffect(() => {
    if (rows !== undefined) return;
    const onResize = () => dispatch({ type: 'resize', height: (stdout.rows || 24) - CHROME_ROWS });
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout, rows]);

  useEffect(() => {
    if (!quitting) return;
    onExit?.();
    exit();
  }, [quitting, onExit, exit]);

  useEffect(() => {
    if (!picking) return;
    (source.sources ? source.sources() : Promise.resolve([])).then(
      (options) => dispatch({ type: 'sources', options }),
      (err) => dispatch({ type: 'sources', options: [], error: describeError(err) }),
    );
  }, [picking, source]);

  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let lastId: number | null = null; // null until the first load for these filters succeeds
    const tick = async () => {
      try {
        const batch = await fetchSince(source, filters, lastId ?? 0, lastId === null ? INITIAL_LINES : POLL_LIMIT);
        if (stopped) return;
        const lines: Array<LogRecord | string> = lastId !== null && batch.truncated ? [GAP_NOTE, ...batch.items] : batch.items;
        dispatch({ type: 'loaded', filters, lines, total: batch.total, at: new Date() });
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

  const o = state.overlay;
  return (
    <Box flexDirection="column">
      {/* The list or overlay always takes its full height, so the bars stay on the terminal's
          last rows however few lines match or however short the help is. */}
      <Box flexDirection="column" height={state.height} overflow="hidden">
        {o?.kind === 'detail' ? (
          <DetailView entry={o.entry} height={state.height} />
        ) : o?.kind === 'help' ? (
          <HelpView />
        ) : o?.kind === 'sources' ? (
          <SourcesView overlay={o} />
        ) : (
          <ListView state={state} />
        )}
      </Box>
      <StatusBar state={state} />
      <FilterBar state={state} />
    </Box>
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
