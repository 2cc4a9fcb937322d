// `cashtrack overview`: the same figures as GET /overview.
import type { Command } from 'commander';
import { overviewQuery } from '../../services/overview/schemas.js';
import { printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { json, positiveInt, type Run } from '../options.js';

export function register(overview: Command, run: Run): void {
  overview.option('--days <n>', 'order window in days (1-366)', positiveInt, 30).addOption(json()).action(run(show));
}

export async function show(io: Io, opts: { days?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const query = await validateInput(overviewQuery, { days: opts.days });
    const o = await ctx.overview.get({ days: query.days });
    if (opts.json) return printJson(io, o);
    const out = (s: string) => io.stdout.write(`${s}\n`);
    out(`members: ${o.members.total} (${o.members.with_balance} with a non-zero balance)`);
    out('');
    out('liabilities:');
    printTable(io, o.liabilities, ['currency', 'available', 'pending', 'overdrawn', 'members_overdrawn']);
    out('');
    out(`orders recorded in the last ${o.orders.days} days (since ${o.orders.since}):`);
    printTable(io, o.orders.by_status, ['status', 'currency', 'count', 'commission', 'cashback', 'referral', 'margin']);
    out('');
    out(`pending payouts: ${o.payouts.pending.count}`);
    if (o.payouts.pending.count > 0) printTable(io, o.payouts.pending.by_currency, ['currency', 'count', 'amount']);
    out('');
    out(`unmatched orders: ${o.unmatched_orders.count}`);
    out(`orders held for review: ${o.held_orders.count}`);
    out(`stalled networks: ${o.networks.stalled.length ? o.networks.stalled.map((n) => `${n.network} (since ${n.stalled_since})`).join(', ') : 'none'}`);
    out('');
    out('receivables (approved commission the networks have not paid, by days since approval):');
    printTable(
      io,
      o.receivables.by_currency.map(
        (c): Record<string, string> => ({
          currency: c.currency,
          unpaid: c.unpaid.commission,
          ...Object.fromEntries(c.buckets.map((b) => [b.bucket, b.commission])),
          overdue: c.overdue.commission,
          members_owed: c.liabilities?.owed ?? '',
        }),
      ),
      ['currency', 'unpaid', '0-30', '31-60', '61-90', 'over_90', 'overdue', 'members_owed'],
    );
    if (o.receivables.variances.length) {
      out('variances (cashtrack networks receivables ID lists them):');
      printTable(io, o.receivables.variances, ['network', 'mismatched', 'unknown', 'overdue']);
    }
    if (o.ai) {
      out('');
      out(
        `AI generations in the last ${o.ai.days} days: ${o.ai.calls} (${o.ai.by_outcome.saved} saved, ${o.ai.by_outcome.dry_run} dry runs, ${o.ai.by_outcome.failed} failed), ${o.ai.tokens.total_tokens} tokens; provider ${o.ai.configured ? o.ai.model : 'not configured'}`,
      );
      if (o.ai.by_model.length) printTable(io, o.ai.by_model, ['model', 'calls', 'total_tokens']);
    }
  });
}
