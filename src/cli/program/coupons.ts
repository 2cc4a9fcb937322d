// `coupons`: coupons and deals from the networks: listing, edits that survive refreshes, revert of
// an AI rewrite, members' links and the refresh.
import { Option, type Command } from 'commander';
import { COUPON_FIELDS, COUPON_ORDERBY, COUPON_STATUSES } from '../../services/coupons/schemas.js';
import { DISCOUNT_TYPES } from '../../networks/types.js';
import { collect, json, paging, type Lazy } from './options.js';

const commands = () => import('../commands/coupons.js');

export function registerCoupons(program: Command, lazy: Lazy): void {
  const coupons = program.command('coupons').description('coupons and deals from the networks: listing, edits a refresh keeps, revert of AI rewrites, refresh');
  paging(
    coupons
      .command('list')
      .description('coupons, newest first')
      .option('--network <id>', 'only this network')
      .option('--advertiser <id>', "only this advertiser (the network's advertiser id)")
      .addOption(new Option('--status <status>', 'only this status (as of now)').choices([...COUPON_STATUSES]))
      .addOption(new Option('--type <type>', 'codes or deals').choices(['code', 'deal']))
      .option('--search <s>', 'part of the title, or the start of the code')
      .option('--expires-before <time>', 'only coupons ending before this ISO 8601 time')
      .option('--ai', 'only coupons with AI-written text')
      .option('--edited', "only coupons with an administrator's edits")
      .addOption(new Option('--orderby <field>', 'order by').choices([...COUPON_ORDERBY]).default('id'))
      .addOption(new Option('--order <order>', 'direction').choices(['asc', 'desc']).default('desc')),
    'coupons',
    20,
  ).action(lazy(commands, 'list'));
  coupons.command('show <id>').description("one coupon, with the network's values of the fields an administrator edited").addOption(json()).action(lazy(commands, 'show'));
  coupons
    .command('update <id>')
    .description('edit fields of a coupon (a refresh keeps them); --reset gives a field back to the network')
    .option('--code <code>', 'the code ("" for a deal)')
    .option('--title <text>', 'the title')
    .option('--description <text>', 'the description ("" for none)')
    .option('--terms <text>', 'the terms ("" for none)')
    .addOption(new Option('--discount-type <type>', 'the kind of discount').choices([...DISCOUNT_TYPES]))
    .option('--discount-value <decimal>', 'the percent or amount ("none" for none)')
    .option('--discount-currency <code>', 'the currency of an amount ("none" for none)')
    .option('--discount-text <text>', 'the discount in words ("" for none)')
    .option('--landing-url <url>', 'the page members land on ("none" for none)')
    .option('--starts-at <time>', 'ISO 8601 with a zone ("none" for none)')
    .option('--ends-at <time>', 'ISO 8601 with a zone ("none" for none)')
    .option('--exclusive', 'mark it exclusive')
    .option('--no-exclusive', 'mark it not exclusive')
    .option('--regions <codes>', 'comma-separated country codes ("" for everywhere)')
    .addOption(new Option('--reset <field>', `give FIELD back to the network (repeatable): ${COUPON_FIELDS.join(', ')}`).argParser(collect))
    .addOption(json())
    .action(lazy(commands, 'update'));
  coupons.command('revert <id>').description('restore the text from before the AI rewrite').addOption(json()).action(lazy(commands, 'revert'));
  coupons
    .command('link <id>')
    .description("print the link a member gets: the advertiser's tracking link landing on the coupon's page")
    .requiredOption('--member <member>', 'the member credited (id, login or email)')
    .addOption(json())
    .action(lazy(commands, 'link'));
  coupons
    .command('refresh')
    .description('refresh coupons from the networks (enqueues a coupons.refresh job and runs it here)')
    .option('--network <id>', 'only this network (default: every enabled, configured network with coupons)')
    .option('--force', 'mark removed what the network no longer lists, even past coupons.max_removed_share')
    .option('--full', 'read the whole list where the network could list only changes (Awin)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands, 'refresh'));
}
