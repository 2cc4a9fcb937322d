// Members' money: `ledger`, `payouts`, `overview`, `orders`, `referrals`.
import { Option, type Command } from 'commander';
import { json, paging, positiveInt, type Lazy } from './options.js';

const commands = {
  ledger: () => import('../commands/ledger.js'),
  payouts: () => import('../commands/payouts.js'),
  overview: () => import('../commands/overview.js'),
  orders: () => import('../commands/orders.js'),
  referrals: () => import('../commands/referrals.js'),
};

export function registerMoney(program: Command, lazy: Lazy): void {
  const ledger = program.command('ledger').description('member balances and ledger entries');
  paging(
    ledger
      .command('members')
      .description('balances per member and currency')
      .option('--search <s>', 'prefix of a login, email or display name')
      .option('--currency <code>', 'only this currency')
      .option('--min-balance <amount>', 'only available balances of at least this')
      .addOption(new Option('--orderby <field>', 'sort by').choices(['available', 'pending', 'name', 'last_entry_at']).default('available'))
      .addOption(new Option('--order <dir>', 'asc or desc').choices(['asc', 'desc'])),
    'rows',
    20,
  ).action(lazy(commands.ledger, 'members'));
  paging(
    ledger
      .command('entries <member>')
      .description("one member's entries, newest first (member id or login)")
      .option('--type <type>', 'only this entry type')
      .option('--currency <code>', 'only this currency'),
    'entries',
    20,
  ).action(lazy(commands.ledger, 'entries'));
  ledger
    .command('adjust <member> <type> <amount>')
    .description('credit or debit a member: TYPE is credit or debit, AMOUNT a decimal string such as 12.50')
    .requiredOption('--note <text>', 'who asked for it and why')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--allow-negative', 'let a debit take the balance below zero')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.ledger, 'adjust'));
  ledger
    .command('reverse <entry-id>')
    .description('reverse an entry (not a payout, not a reversal, at most once)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.ledger, 'reverse'));
  ledger.command('verify').description('recompute every balance from the entries and check every invariant; exit 1 on any discrepancy').addOption(json()).action(lazy(commands.ledger, 'verify'));

  const payouts = program.command('payouts').description("members' payouts: the amount leaves the balance when the payout is created");
  paging(
    payouts
      .command('list')
      .description('payouts, newest first')
      .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'paid', 'cancelled']))
      .option('--member <member>', 'only this member (id or login)')
      .option('--currency <code>', 'only this currency'),
    'payouts',
    20,
  ).action(lazy(commands.payouts, 'list'));
  payouts.command('show <id>').description('one payout, with its payment details').addOption(json()).action(lazy(commands.payouts, 'show'));
  payouts
    .command('create <member> <amount>')
    .description('pay a member out (member id or login; AMOUNT a decimal string such as 25.00): debits the balance now')
    .requiredOption('--method <method>', 'how the money is sent, e.g. paypal or bank_transfer')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--details <text>', 'where it is sent (PayPal address, IBAN...); never logged')
    .option('--note <text>', 'a note for administrators')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.payouts, 'create'));
  payouts
    .command('complete <id>')
    .description('mark a pending payout paid')
    .option('--reference <ref>', "the payment's reference, e.g. the PayPal transaction id")
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.payouts, 'complete'));
  payouts
    .command('cancel <id>')
    .description('cancel a pending payout and credit its amount back')
    .requiredOption('--reason <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.payouts, 'cancel'));

  program
    .command('overview')
    .description('members, liabilities, recent orders and margin, pending payouts, unmatched orders')
    .option('--days <n>', 'order window in days (1-366)', positiveInt, 30)
    .addOption(json())
    .action(lazy(commands.overview, 'show'));

  const orders = program.command('orders').description('orders from the networks or entered by hand, and their cashback');
  paging(
    orders
      .command('list')
      .description('orders, newest first')
      .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'approved', 'declined']))
      .option('--member <member>', "only this member's orders (id or login)")
      .option('--network <id>', 'only this network')
      .option('--advertiser <id>', 'only this advertiser id')
      .option('--unmatched', 'only orders without a member')
      .option('--matched', 'only orders with a member')
      .addOption(new Option('--review <state>', 'only orders held for review (held), or released or declined after it').choices(['held', 'released', 'declined']))
      .option('--search <s>', 'prefix of the transaction id or merchant order ref')
      .option('--after <time>', 'recorded after this ISO 8601 time')
      .option('--before <time>', 'recorded before this ISO 8601 time'),
    'orders',
    20,
  ).action(lazy(commands.orders, 'list'));
  orders.command('show <id>').description('one order, with its credits').addOption(json()).action(lazy(commands.orders, 'show'));
  orders
    .command('create')
    .description('record an order by hand (e.g. a missing-cashback claim); a known transaction is not recorded twice')
    .requiredOption('--network <id>', 'network id, e.g. awin')
    .requiredOption('--transaction-id <id>', "the network's transaction id")
    .requiredOption('--sale-amount <amount>', 'sale amount, a decimal string such as 120.00')
    .requiredOption('--commission <amount>', "the site's commission, a decimal string")
    .requiredOption('--note <text>', 'who asked for it and why')
    .option('--member <member>', 'the member (id or login; default: matched from --sub-id)')
    .option('--sub-id <s>', 'tracking sub id: digits are a user id, anything else a login')
    .option('--advertiser <id>', "the network's advertiser id")
    .option('--merchant-ref <ref>', "the shop's order reference")
    .option('--currency <code>', 'currency (default: the site currency)')
    .addOption(new Option('--status <status>', 'status').choices(['pending', 'approved', 'declined']).default('pending'))
    .option('--clicked-at <time>', 'click time, ISO 8601')
    .option('--event-at <time>', 'purchase time, ISO 8601')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.orders, 'create'));
  orders
    .command('update <id>')
    .description('change the status of an order, or its amounts while pending')
    .addOption(new Option('--status <status>', 'new status').choices(['pending', 'approved', 'declined']))
    .option('--sale-amount <amount>', 'corrected sale amount (pending orders only)')
    .option('--commission <amount>', 'corrected commission (pending orders only)')
    .option('--currency <code>', 'corrected currency (with both amounts)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'update'));
  orders
    .command('assign <id> <member>')
    .description('give an unmatched order its member (id or login) and apply the effects of its status')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'assign'));
  orders
    .command('release <id>')
    .description('release an order held for review: the ledger effects of its current status apply, once')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'release'));
  orders
    .command('decline <id>')
    .description("decline an order held for review: declined with no ledger effect; the network's later reports of it are ignored")
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'decline'));
  orders
    .command('poll')
    .description("fetch the networks' transactions and record them (enqueues an orders.poll job and runs it here); status changes reach the ledger")
    .option('--network <id>', 'only this network (default: every enabled, configured network)')
    .option('--since <date>', 'start of the window, ISO 8601 (default: oldest pending order minus 7 days, else 30 days ago)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands.orders, 'poll'));

  const referrals = program.command('referrals').description('who referred whom; referrers earn a share of their referees\' approved cashback');
  paging(
    referrals
      .command('list')
      .description('referrals with what each referrer earned, newest first')
      .option('--referrer <member>', 'only referrals by this member (id or login)')
      .option('--referee <member>', 'only referrals of this member (id or login)')
      .option('--active', 'only live referrals')
      .option('--ended', 'only ended referrals'),
    'referrals',
    20,
  ).action(lazy(commands.referrals, 'list'));
  referrals.command('add <referrer> <referee>').description('make REFERRER the referrer of REFEREE (ids or logins)').addOption(json()).action(lazy(commands.referrals, 'add'));
  referrals.command('remove <referee>').description("end a member's live referral (future cashback only; past credits stay)").addOption(json()).action(lazy(commands.referrals, 'remove'));
}
