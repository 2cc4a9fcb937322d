// What the command groups (src/cli/commands/<group>.ts) share: how their actions are run, the
// option shapes, so `--page`, `--per-page` and `--json` mean the same on every command and a bad
// value is the same usage error everywhere, and the one way a list command prints its page.
import { Option, type Command } from 'commander';
import { WORKERS_RULE, workersSetting } from '../config/workers.js';
import { printJson, printTable, UsageError, type Io } from './io.js';

/**
 * Makes a command's action commander's: commander calls it while it parses (synchronously), and
 * main() runs the action afterwards with the program's streams and the command's arguments.
 */
export type Run = <A extends unknown[]>(action: (io: Io, ...args: A) => Promise<void>) => (...args: unknown[]) => void;

/** A command group's file: it declares the group's commands on the command main.ts made for it. */
export interface CommandGroup {
  register(group: Command, run: Run): void;
}

export const json = () => new Option('--json', 'machine-readable output; errors as one JSON object on stderr');

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`expected a positive integer, got "${value}"`);
  return Number(value);
}

export function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be 0-65535, got "${value}"`);
  return Number(value);
}

/** `--workers`: what `server.workers` takes (config/workers.ts). */
export function workers(value: string): number | 'auto' {
  const setting = workersSetting(value);
  if (setting === null) throw new UsageError(`--workers must be ${WORKERS_RULE}, got "${value.slice(0, 32)}"`);
  return setting;
}

/** A repeatable option's values, in order. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `per_page` as the REST list routes take it: 1-100. */
function perPage(value: string): number {
  const n = positiveInt(value);
  if (n > 100) throw new UsageError(`--per-page must be between 1 and 100, got "${value}"`);
  return n;
}

/** The options every list command has, as its action gets them. */
export interface ListOptions {
  page: number;
  perPage: number;
  json?: boolean;
}

/** One page of a list, as a list command's action answers it. */
export interface ListPage<T> {
  items: readonly T[];
  total: number;
  /** The page read, named in the total line when the list has more rows than the page shows. */
  page: number;
}

/** The table of a list: its columns, of each item or of the row `row` makes of it. */
type ListTable<T extends object, R extends object> =
  | { row: (item: T) => R; columns: (keyof R & string)[] }
  | { row?: undefined; columns: (keyof T & string)[] };

export type ListSpec<T extends object, R extends object> = ListTable<T, R> & {
  /** What `--per-page` counts, e.g. `payouts`. */
  items: string;
  /** `--per-page` when not given. */
  perPage: number;
  /** The line under the table, e.g. `3 payout(s)`. */
  count: (total: number) => string;
  /** False: the total line does not name the page. */
  pageInCount?: boolean;
};

/**
 * A list command: `--page`, `--per-page` (1-100, default `spec.perPage`) and `--json` after its own
 * options. The action reads one page (null: it printed its own answer); the page is printed here,
 * as JSON (the items) or as a table with its total line.
 */
export function listCommand<T extends object, R extends object, A extends unknown[]>(
  command: Command,
  spec: ListSpec<T, R>,
  run: Run,
  action: (io: Io, ...args: A) => Promise<ListPage<T> | null>,
): Command {
  return command
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', `${spec.items} per page (1-100)`, perPage, spec.perPage)
    .addOption(json())
    .action(
      run(async (io: Io, ...args: A) => {
        const listed = await action(io, ...args);
        if (listed) printList(io, listed, spec, (args[args.length - 1] as ListOptions).json === true);
      }),
    );
}

function printList<T extends object, R extends object>(io: Io, { items, total, page }: ListPage<T>, spec: ListSpec<T, R>, asJson: boolean): void {
  if (asJson) {
    printJson(io, items);
    return;
  }
  if (spec.row) printTable(io, items.map(spec.row), spec.columns);
  else printTable(io, items, spec.columns);
  io.stdout.write(`${spec.count(total)}${spec.pageInCount !== false && total > items.length ? `, page ${page}` : ''}\n`);
}

/** `--orderby`, `--order` as a list command takes them (the list's schema checks the values). */
export interface SortOptions {
  orderby?: string;
  order?: string;
}

/**
 * The parser of a comma-separated "is any of" option over `values` (`--status pending,approved`):
 * each value is checked as commander checks a choice, so a misspelt one is a usage error (exit 2).
 */
export function commaChoices(flag: string, values: readonly string[]): (value: string) => string {
  return (value) => {
    for (const v of value.split(',').map((s) => s.trim())) {
      if (!values.includes(v)) throw new UsageError(`${flag}: "${v.slice(0, 32)}" is not one of ${values.join(', ')}`);
    }
    return value;
  };
}
