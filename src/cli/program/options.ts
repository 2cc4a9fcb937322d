// The option shapes commands share, so `--page`, `--per-page` and `--json` mean the same on every
// command and a bad value is the same usage error everywhere.
import { Option, type Command } from 'commander';
import { UsageError } from '../io.js';

/** A command's action, loaded only when it runs (see main.ts). */
export type Loader = () => Promise<object>;
export type Lazy = (load: Loader, name: string) => (...args: unknown[]) => void;

export const json = () => new Option('--json', 'machine-readable output; errors as one JSON object on stderr');

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`expected a positive integer, got "${value}"`);
  return Number(value);
}

export function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be 0-65535, got "${value}"`);
  return Number(value);
}

/** A repeatable option's values, in order. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `per_page` as the REST list routes take it: 1-100. */
function perPage(value: string): number {
  const n = positiveInt(value);
  if (n > 100) throw new UsageError(`--per-page must be between 1 and 100, got "${value}"`);
  return n;
}

/** A list command: `--page`, `--per-page` (1-100, default `perPageDefault`) and `--json`. */
export function paging(command: Command, items: string, perPageDefault: number): Command {
  return command
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', `${items} per page (1-100)`, perPage, perPageDefault)
    .addOption(json());
}
