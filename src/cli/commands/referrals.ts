// `cashtrack referrals list|add|remove`.
import type { Referral } from '../../services/referrals/index.js';
import { referralSchemas } from '../../services/referrals/schemas.js';
import { memberId, printJson, printTable, UsageError, validateInput, withContext, type Io } from '../io.js';


const earned = (r: Referral) => r.earned.map((e) => `${e.amount} ${e.currency}`).join(', ') || '0';

export async function list(io: Io, opts: { referrer?: string; referee?: string; active?: boolean; ended?: boolean; page: number; perPage: number; json?: boolean }): Promise<void> {
  if (opts.active && opts.ended) throw new UsageError('--active and --ended exclude each other');
  await withContext(io, async (ctx) => {
    const query = await validateInput(referralSchemas.list, {
      referrer_id: opts.referrer === undefined ? undefined : await memberId(ctx, opts.referrer),
      referee_id: opts.referee === undefined ? undefined : await memberId(ctx, opts.referee),
      active: opts.active ? true : opts.ended ? false : undefined,
      page: opts.page,
      per_page: opts.perPage,
    });
    const { items, total } = await ctx.referrals.list(query);
    if (opts.json) return printJson(io, items);
    printTable(
      io,
      items.map((r) => ({ id: r.id, referrer: r.referrer.login, referee: r.referee.login, since: r.since, ended_at: r.ended_at ?? '', earned: earned(r) })),
      ['id', 'referrer', 'referee', 'since', 'ended_at', 'earned'],
    );
    io.stdout.write(`${total} referral(s)${total > items.length ? `, page ${query.page}` : ''}\n`);
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
