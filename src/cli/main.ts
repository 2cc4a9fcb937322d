// The `cashtrack` command line. Each command's module is imported only when it runs, so a CLI
// command never pays for hapi or Ink at start-up. The commands are declared by group in
// src/cli/program/; this file is the program, its usage errors and the exit code.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { reportError, UsageError, writeError, type Io } from './io.js';
import { registerAi } from './program/ai.js';
import { registerCatalog } from './program/catalog.js';
import { registerCoupons } from './program/coupons.js';
import { registerMoney } from './program/money.js';
import { registerPages } from './program/pages.js';
import type { Lazy } from './program/options.js';
import { registerSystem } from './program/system.js';
import { registerWebhooks } from './program/webhooks.js';

const pkg = JSON.parse(readFileSync(new URL(import.meta.url.includes('/dist/') ? '../../../package.json' : '../../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = pkg.version;

type Action = (io: Io, ...args: any[]) => Promise<void>;

const USAGE_HINT = '(run cashtrack --help for usage)';

/**
 * The program. With `json`, commander's own messages (usage errors, help shown because of one)
 * are not written: main() reports them as one JSON object instead.
 */
export function buildProgram(io: Io, result: { run?: () => Promise<void> }, options: { json?: boolean } = {}): Command {
  const silent = options.json === true;
  const program = new Command('cashtrack')
    .description('Back office of a cashback site: networks, postbacks, member ledger, payouts and shop content.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => (silent ? undefined : io.stderr.write(s)) })
    .showHelpAfterError(USAGE_HINT);

  // Commander parses synchronously; the chosen action is run afterwards by main().
  const lazy: Lazy =
    (load, name) =>
    (...args: unknown[]) => {
      result.run = async () => {
        const mod = await load();
        await (mod as Record<string, Action>)[name](io, ...args.slice(0, -1));
      };
    };

  registerSystem(program, lazy);
  registerMoney(program, lazy);
  registerCatalog(program, lazy);
  registerPages(program, lazy);
  registerWebhooks(program, lazy);
  registerCoupons(program, lazy);
  registerAi(program, lazy);
  return program;
}

/**
 * `--json` anywhere before `--`: the caller is a script, errors included. Decided on the raw
 * arguments because a usage error happens before commander has parsed any option.
 */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** A commander usage error as the CLI reports it: `svc_usage` with commander's words. */
function usage(message: string): UsageError {
  return new UsageError(message.replace(/^error: /, '').trim() || 'usage error');
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[], io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }): Promise<number> {
  const json = wantsJson(argv);
  const result: { run?: () => Promise<void> } = {};
  const program = buildProgram(io, result, { json });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      // `commander.help`: help shown because a command group was given no subcommand.
      const message = err.code === 'commander.help' ? 'a subcommand is required' : err.message;
      if (json) writeError(io, { code: 'svc_usage', message: usage(message).message, data: { status: 400 }, exit: 2 }, true);
      return 2;
    }
    if (err instanceof UsageError) return reportError(io, err, json);
    throw err;
  }
  if (!result.run) {
    if (json) return reportError(io, usage('a command is required'), true);
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await result.run();
    return 0;
  } catch (err) {
    return reportError(io, err, json);
  }
}
