// `cashtrack clicks list|show`: the click schemas and service, in-process.
import type { Command } from 'commander';
import type { Click } from '../../services/clicks/index.js';
import { clickSchemas } from '../../services/clicks/schemas.js';
import { memberId, printFields, printJson, validateInput, withContext, type Io } from '../io.js';
import { json, listCommand, type ListOptions, type ListPage, type Run } from '../options.js';

const rule = (c: Click) =>
  c.cashback_rule ? `${c.cashback_rule.type} ${c.cashback_rule.value}${c.cashback_rule.currency ? ` ${c.cashback_rule.currency}` : ''}` : '';

export function register(clicks: Command, run: Run): void {
  listCommand(
    clicks
      .command('list')
      .description('clicks through /go/, newest first')
      .option('--member <member>', "only this member's clicks (id or login)")
      .option('--network <id>', 'only clicks to shops of this network')
      .option('--advertiser <id>', 'only clicks to this advertiser id')
      .option('--after <time>', 'only clicks strictly after this instant (ISO 8601)')
      .option('--before <time>', 'only clicks strictly before this instant (ISO 8601)'),
    {
      items: 'clicks',
      perPage: 20,
      row: (c: Click) => ({ id: c.id, at: c.created_at, member: c.member?.login ?? '', shop: `${c.network}/${c.advertiser}`, rule: rule(c) }),
      columns: ['id', 'at', 'member', 'shop', 'rule'],
      count: (total) => `${total} click(s)`,
    },
    run,
    list,
  );
  clicks.command('show <id>').description('one click, with what was kept of the client and the orders that recorded it').addOption(json()).action(run(show));
}

export async function list(
  io: Io,
  opts: ListOptions & { member?: string; network?: string; advertiser?: string; after?: string; before?: string },
): Promise<ListPage<Click>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(clickSchemas.list, {
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      network: opts.network,
      advertiser: opts.advertiser,
      after: opts.after,
      before: opts.before,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.clicks.list(query)), page: query.page };
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(clickSchemas.id, { id });
    const c = await ctx.clicks.get(params.id);
    if (opts.json) return printJson(io, c);
    printFields(
      io,
      [
        ['id', c.id],
        ['at', c.created_at],
        ['member', c.member ? `${c.member.display_name} (${c.member.login}, id ${c.member.id})` : null],
        ['shop', `${c.advertiser_name ?? c.advertiser} (${c.network}/${c.advertiser})`],
        ['coupon', c.coupon_id],
        ['url', c.url],
        ['rule', rule(c)],
        ['address', c.ip_prefix],
        ['device', c.ua_hash],
        ['orders', c.order_ids.join(', ')],
      ],
      8,
    );
  });
}
