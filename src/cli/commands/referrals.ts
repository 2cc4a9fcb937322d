// `cashtrack referrals list|add|remove`.
import type { Command } from 'commander';
import type { Referral } from '../../services/referrals/index.js';
import { referralSchemas } from '../../services/referrals/schemas.js';
import { memberId, printJson, UsageError, validateInput, withContext, type Io } from '../io.js';
import { json, listCommand, type ListOptions, type ListPage, type Run } from '../options.js';

export function register(referrals: Command, run: Run): void {
  listCommand(
    referrals
      .command('list')
      .description('referrals with what each referrer earned, newest first')
      .option('--referrer <member>', 'only referrals by this member (id or login)')
      .option('--referee <member>', 'only referrals of this member (id or login)')
      .option('--active', 'only live referrals')
      .option('--ended', 'only ended referrals'),
    {
      items: 'referrals',
      perPage: 20,
      row: (r: Referral) => ({ id: r.id, referrer: r.referrer.login, referee: r.referee.login, since: r.since, ended_at: r.ended_at ?? '', earned: earned(r) }),
      columns: ['id', 'referrer', 'referee', 'since', 'ended_at', 'earned'],
      count: (total) => `${total} referral(s)`,
    },
    run,
    list,
  );
  referrals.command('add <referrer> <referee>').description('make REFERRER the referrer of REFEREE (ids or logins)').addOption(json()).action(run(add));
  referrals
    .command('remove <referee>')
    .description("end a member's live referral (future cashback only; past credits stay)")
    .addOption(json())
    .action(run(remove));
}

const earned = (r: Referral) => r.earned.map((e) => `${e.amount} ${e.currency}`).join(', ') || '0';

export async function list(
  io: Io,
  opts: ListOptions & { referrer?: string; referee?: string; active?: boolean; ended?: boolean },
): Promise<ListPage<Referral>> {
  if (opts.active && opts.ended) throw new UsageError('--active and --ended exclude each other');
  return withContext(io, async (ctx) => {
    const query = await validateInput(referralSchemas.list, {
      referrer_id: opts.referrer === undefined ? undefined : await memberId(ctx, opts.referrer),
      referee_id: opts.referee === undefined ? undefined : await memberId(ctx, opts.referee),
      active: opts.active ? true : opts.ended ? false : undefined,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.referrals.list(query)), page: query.page };
  });
}

export async function add(io: Io, referrer: string, referee: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(referralSchemas.create, { referrer_id: await memberId(ctx, referrer), referee_id: await memberId(ctx, referee) });
    const r = await ctx.referrals.add(payload, 'cli');
    if (opts.json) return printJson(io, r);
    io.stdout.write(`referral ${r.id}: ${r.referrer.login} now refers ${r.referee.login}\n`);
  });
}

export async function remove(io: Io, referee: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(referralSchemas.referee, { referee_id: await memberId(ctx, referee) });
    const r = await ctx.referrals.remove(params.referee_id, 'cli');
    if (opts.json) return printJson(io, r);
    io.stdout.write(`referral ${r.id} ended: ${r.referrer.login} no longer earns from ${r.referee.login}'s cashback (earned so far: ${earned(r)})\n`);
  });
}
