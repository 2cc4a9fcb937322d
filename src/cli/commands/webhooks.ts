// `cashtrack webhooks add|list|show|update|remove|test|deliveries|delivery|redeliver`: the webhook
// schemas and service, in-process. Deliveries queued by a command are sent by the daemon's sender;
// `test` and `redeliver` attempt theirs here and now.
import { Option, type Command } from 'commander';
import type { Delivery, Webhook } from '../../services/webhooks/index.js';
import { DELIVERY_ORDERBY, DELIVERY_STATUSES, WEBHOOK_ORDERBY, webhookSchemas } from '../../services/webhooks/schemas.js';
import { idempotently } from '../idempotency.js';
import { printFields, printJson, UsageError, validateInput, withContext, type Io } from '../io.js';
import { collect, commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(webhooks: Command, run: Run): void {
  const events = 'an event to send (repeatable), e.g. order.status_changed or ledger.entry_posted, or * for all (docs/api.md lists them)';
  webhooks
    .command('add <url>')
    .description('subscribe a URL to events; prints the signing secret once')
    .requiredOption('--event <event>', events, collect)
    .option('--description <text>', 'what it is for')
    .option('--disabled', 'create it paused')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(run(add));
  listCommand(
    webhooks
      .command('list')
      .description('subscriptions, newest first')
      .option('--enabled', 'only enabled ones')
      .option('--disabled', 'only disabled ones')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(WEBHOOK_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'webhooks',
      perPage: 20,
      row: (w: Webhook) => ({ ...w, events: w.events.join(','), enabled: w.enabled ? 'yes' : 'no' }),
      columns: ['id', 'url', 'events', 'enabled', 'failure_count', 'description'],
      count: (total) => `${total} webhook(s)`,
    },
    run,
    list,
  );
  webhooks.command('show <id>').description('one subscription').addOption(json()).action(run(show));
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
    .action(run(update));
  webhooks.command('remove <id>').description('delete a subscription and its delivery log').option('--yes', 'confirm').addOption(json()).action(run(remove));
  webhooks.command('test <id>').description('send a ping event now and print its delivery; exit 1 unless delivered').addOption(json()).action(run(test));
  listCommand(
    webhooks
      .command('deliveries <id>')
      .description("a subscription's delivery log, newest first")
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', DELIVERY_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', DELIVERY_STATUSES))
      .option('--event <list>', 'only these events, comma-separated')
      .option('--after <time>', 'created strictly after this ISO 8601 time')
      .option('--before <time>', 'created strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(DELIVERY_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'deliveries',
      perPage: 20,
      columns: ['id', 'event', 'status', 'attempts', 'last_status', 'duration_ms', 'created_at', 'next_attempt_at'],
      count: (total) => `${total} deliver${total === 1 ? 'y' : 'ies'}`,
    },
    run,
    deliveries,
  );
  webhooks.command('delivery <id>').description('one delivery (msg_...) with its payload').addOption(json()).action(run(delivery));
  webhooks
    .command('redeliver <id>')
    .description('attempt a delivery (msg_...) again now, same id and body; exit 1 unless delivered')
    .addOption(json())
    .action(run(redeliver));
}

/** The attempt was made and printed, and the receiver did not take it: exit 1, no further message. */
export class NotDelivered extends Error {
  readonly silent = true;
  constructor(readonly id: string) {
    super(`delivery ${id} not delivered`);
  }
}

function printWebhook(io: Io, w: Webhook & { secret?: string | null }): void {
  const rows: [string, unknown][] = [
    ['id', w.id],
    ['url', w.url],
    ['events', w.events.join(', ')],
    ['description', w.description],
    ['enabled', w.enabled ? 'yes' : `no${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`],
    ['failures', w.failure_count ? `${w.failure_count} in a row` : null],
    ['created', `${w.created_at} by ${w.actor}`],
    ['updated', w.updated_at],
  ];
  printFields(io, rows, 12);
  if (w.secret) io.stdout.write(`secret      ${w.secret}\n            (shown once: keep it now to verify the webhook-signature header)\n`);
}

function printDelivery(io: Io, d: Delivery): void {
  const rows: [string, unknown][] = [
    ['id', d.id],
    ['webhook', d.webhook_id],
    ['event', d.event],
    ['status', d.status],
    ['attempts', d.attempts],
    ['response', d.last_status],
    ['error', d.last_error],
    ['duration', d.duration_ms === null ? null : `${d.duration_ms} ms`],
    ['next', d.next_attempt_at],
    ['created', d.created_at],
    ['delivered', d.delivered_at],
  ];
  printFields(io, rows, 12);
  if (d.payload !== undefined) io.stdout.write(`payload     ${JSON.stringify(d.payload)}\n`);
}

async function webhookId(id: string): Promise<number> {
  return (await validateInput(webhookSchemas.webhookId, { id })).id;
}

async function deliveryId(id: string): Promise<string> {
  return (await validateInput(webhookSchemas.deliveryId, { id })).id;
}

export async function add(
  io: Io,
  url: string,
  opts: { event: string[]; description?: string; disabled?: boolean; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(webhookSchemas.create, {
      url,
      events: opts.event,
      description: opts.description,
      enabled: opts.disabled ? false : undefined,
    });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'webhooks.create', { params: {}, payload }, 201, (once) =>
      ctx.webhooks.create(payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    printWebhook(io, result);
    if (replayed)
      io.stdout.write(
        '(replayed: this Idempotency-Key was used before; nothing new happened, and the secret is not shown again: rotate it with `webhooks update ID --rotate-secret` if it was lost)\n',
      );
  });
}

export async function list(io: Io, opts: ListOptions & SortOptions & { enabled?: boolean; disabled?: boolean }): Promise<ListPage<Webhook>> {
  return withContext(io, async (ctx) => {
    if (opts.enabled && opts.disabled) throw new UsageError('--enabled and --disabled exclude each other');
    const query = await validateInput(webhookSchemas.list, {
      enabled: opts.enabled ? true : opts.disabled ? false : undefined,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.webhooks.list(query)), page: query.page };
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const webhook = await ctx.webhooks.get(await webhookId(id));
    if (opts.json) return printJson(io, webhook);
    printWebhook(io, webhook);
  });
}

export async function update(
  io: Io,
  id: string,
  opts: { url?: string; event?: string[]; description?: string; enable?: boolean; disable?: boolean; rotateSecret?: boolean; json?: boolean },
): Promise<void> {
  await withContext(io, async (ctx) => {
    if (opts.enable && opts.disable) throw new UsageError('--enable and --disable exclude each other');
    const params = await validateInput(webhookSchemas.webhookId, { id });
    const payload = await validateInput(webhookSchemas.update, {
      url: opts.url,
      events: opts.event,
      description: opts.description,
      enabled: opts.enable ? true : opts.disable ? false : undefined,
      rotate_secret: opts.rotateSecret ? true : undefined,
    });
    if (Object.keys(payload).length === 0)
      throw new UsageError('nothing to change: give --url, --event, --description, --enable, --disable or --rotate-secret');
    const webhook = await ctx.webhooks.update(params.id, payload, 'cli');
    if (opts.json) return printJson(io, webhook);
    printWebhook(io, webhook);
  });
}

export async function remove(io: Io, id: string, opts: { yes?: boolean; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const webhook = await webhookId(id);
    if (!opts.yes) throw new UsageError(`removing webhook ${webhook} deletes its delivery log too: add --yes to confirm`);
    const result = await ctx.webhooks.remove(webhook, 'cli');
    if (opts.json) return printJson(io, result);
    io.stdout.write(`webhook ${webhook} (${result.previous.url}) deleted\n`);
  });
}

export async function test(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const delivery = await ctx.webhooks.test(await webhookId(id), 'cli');
    if (opts.json) return printJson(io, delivery);
    printDelivery(io, delivery);
    // A script can tell from the exit code whether the receiver took the ping.
    if (delivery.status !== 'delivered') throw new NotDelivered(delivery.id);
  });
}

export async function deliveries(
  io: Io,
  id: string,
  opts: ListOptions & SortOptions & { status?: string; statusExclude?: string; event?: string; after?: string; before?: string },
): Promise<ListPage<Delivery>> {
  return withContext(io, async (ctx) => {
    const webhook = await webhookId(id);
    const query = await validateInput(webhookSchemas.deliveries, {
      status: opts.status,
      status_exclude: opts.statusExclude,
      event: opts.event,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.webhooks.deliveries(webhook, query)), page: query.page };
  });
}

export async function delivery(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const d = await ctx.webhooks.delivery(await deliveryId(id));
    if (opts.json) return printJson(io, d);
    printDelivery(io, d);
  });
}

export async function redeliver(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const d = await ctx.webhooks.redeliver(await deliveryId(id), 'cli');
    if (opts.json) return printJson(io, d);
    printDelivery(io, d);
    if (d.status !== 'delivered') throw new NotDelivered(d.id);
  });
}
