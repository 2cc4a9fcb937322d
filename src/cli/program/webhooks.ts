// Outgoing webhooks: `webhooks add|list|show|update|remove|test|deliveries|delivery|redeliver`.
import { Option, type Command } from 'commander';
import { collect, json, paging, type Lazy } from './options.js';

const commands = {
  webhooks: () => import('../commands/webhooks.js'),
};

export function registerWebhooks(program: Command, lazy: Lazy): void {
  const webhooks = program.command('webhooks').description('outgoing webhooks: subscriptions, their delivery log, tests and redelivery');
  const events = 'an event to send (repeatable), e.g. order.status_changed or ledger.entry_posted, or * for all (docs/api.md lists them)';
  webhooks
    .command('add <url>')
    .description('subscribe a URL to events; prints the signing secret once')
    .requiredOption('--event <event>', events, collect)
    .option('--description <text>', 'what it is for')
    .option('--disabled', 'create it paused')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.webhooks, 'add'));
  paging(
    webhooks
      .command('list')
      .description('subscriptions, newest first')
      .option('--enabled', 'only enabled ones')
      .option('--disabled', 'only disabled ones'),
    'webhooks',
    20,
  ).action(lazy(commands.webhooks, 'list'));
  webhooks.command('show <id>').description('one subscription').addOption(json()).action(lazy(commands.webhooks, 'show'));
  webhooks
    .command('update <id>')
    .description('change a subscription (what is not given is kept)')
    .option('--url <url>', 'new URL')
    .option('--event <event>', `${events}; replaces the list`, collect)
    .option('--description <text>', 'what it is for ("" clears it)')
    .option('--enable', 'enable it: clears its failures and resumes its waiting deliveries')
    .option('--disable', 'pause it: deliveries wait until it is enabled')
    .option('--rotate-secret', 'a new signing secret, printed once')
    .addOption(json())
    .action(lazy(commands.webhooks, 'update'));
  webhooks.command('remove <id>').description('delete a subscription and its delivery log').option('--yes', 'confirm').addOption(json()).action(lazy(commands.webhooks, 'remove'));
  webhooks.command('test <id>').description('send a ping event now and print its delivery; exit 1 unless delivered').addOption(json()).action(lazy(commands.webhooks, 'test'));
  paging(
    webhooks
      .command('deliveries <id>')
      .description("a subscription's delivery log, newest first")
      .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'failed', 'delivered', 'dead'])),
    'deliveries',
    20,
  ).action(lazy(commands.webhooks, 'deliveries'));
  webhooks.command('delivery <id>').description('one delivery (msg_...) with its payload').addOption(json()).action(lazy(commands.webhooks, 'delivery'));
  webhooks.command('redeliver <id>').description('attempt a delivery (msg_...) again now, same id and body; exit 1 unless delivered').addOption(json()).action(lazy(commands.webhooks, 'redeliver'));
}
