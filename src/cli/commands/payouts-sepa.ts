// `cashtrack payouts sepa-settings`: the site's own account for SEPA payout files (the debtor of
// every pain.001), shown or stored through the payouts' SEPA settings store, in-process.
import type { Command } from 'commander';
import { dict } from '../../objects.js';
import type { SepaSettingsView } from '../../services/payouts/index.js';
import { printFields, printJson, UsageError, withContext, type Io } from '../io.js';
import { collect, json, type Run } from '../options.js';

export function registerSepa(payouts: Command, run: Run): void {
  payouts
    .command('sepa-settings')
    .description("show the SEPA debtor account (the site's own), or store some of it")
    .option('--set <key=value>', 'a setting: name, iban, bic, version (09 or 03) (repeatable)', collect)
    .option('--unset <key>', 'remove a setting (repeatable; version goes back to 09)', collect)
    .addOption(json())
    .action(run(sepaSettings));
}

function printView(io: Io, v: SepaSettingsView): void {
  printFields(
    io,
    [
      ['configured', v.configured ? 'yes' : `no (missing ${v.missing.join(', ')})`],
      ['name', v.name],
      ['name in file', v.name_in_file],
      ['iban', v.iban],
      ['bic', v.bic],
      ['version', `pain.001.001.${v.version}`],
    ],
    14,
  );
}

export async function sepaSettings(io: Io, opts: { set?: string[]; unset?: string[]; json?: boolean }): Promise<void> {
  // Keys typed by the operator: `--set __proto__=x` is a (refused) setting name, nothing more.
  const values = dict<string | null>();
  for (const pair of opts.set ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set expects key=value, got "${pair.slice(0, 64)}"`);
    values[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  for (const key of opts.unset ?? []) values[key] = null;
  await withContext(io, async (ctx) => {
    const changed = Object.keys(values).length > 0;
    const view = changed ? await ctx.sepaSettings.configure(values, 'cli') : await ctx.sepaSettings.view();
    if (opts.json) return printJson(io, view);
    if (changed)
      io.stdout.write(
        `SEPA debtor account configured (${Object.keys(values).join(', ')}); ${view.configured ? 'ready' : `still missing ${view.missing.join(', ')}`}\n`,
      );
    else printView(io, view);
  });
}
