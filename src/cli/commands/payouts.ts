// `cashtrack payouts list|show|create|complete|cancel|sepa-settings|paypal-settings` (and
// `payouts batch ...`, payout-batches.ts): the payout schemas and service, in-process. The PayPal
// client secret is read from standard input or an environment variable, never from the command
// line (shell history, the process list), and never printed.
import { Option, type Command } from 'commander';
import type { Payout, PayPalSettingsView } from '../../services/payouts/index.js';
import { dict } from '../../objects.js';
import { PAYOUT_ORDERBY, PAYOUT_STATUSES, payoutSchemas } from '../../services/payouts/schemas.js';
import { memberId, printFields, printJson, readStdin, UsageError, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';
import { registerSepa } from './payouts-sepa.js';
import { collect, commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';
import { register as registerBatches } from './payout-batches.js';

export function register(payouts: Command, run: Run): void {
  listCommand(
    payouts
      .command('list')
      .description('payouts, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', PAYOUT_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', PAYOUT_STATUSES))
      .option('--member <member>', 'only this member (id or login)')
      .option('--currency <codes>', 'only these currencies, comma-separated')
      .option('--method <methods>', 'only these methods, comma-separated')
      .option('--after <time>', 'requested strictly after this ISO 8601 time')
      .option('--before <time>', 'requested strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(PAYOUT_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'payouts',
      perPage: 20,
      columns: ['id', 'login', 'amount', 'currency', 'method', 'status', 'created_at', 'closed_at'],
      count: (total) => `${total} payout(s)`,
    },
    run,
    list,
  );
  payouts.command('show <id>').description('one payout, with its payment details').addOption(json()).action(run(show));
  payouts
    .command('create <member> <amount>')
    .description('pay a member out (member id or login; AMOUNT a decimal string such as 25.00): debits the balance now')
    .requiredOption('--method <method>', 'how the money is sent, e.g. paypal or bank_transfer')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--details <text>', 'where it is sent (PayPal address, IBAN...); never logged')
    .option('--note <text>', 'a note for administrators')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(run(create));
  payouts
    .command('complete <id>')
    .description('mark a pending payout paid')
    .option('--reference <ref>', "the payment's reference, e.g. the PayPal transaction id")
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(complete));
  payouts
    .command('cancel <id>')
    .description('cancel a pending payout and credit its amount back')
    .requiredOption('--reason <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(cancel));
  registerSepa(payouts, run);
  payouts
    .command('paypal-settings')
    .description('show the PayPal Payouts account, or store some of it; the client secret only from standard input or the environment')
    .option('--set <key=value>', 'a setting: client_id, environment (sandbox or live), base_url (repeatable)', collect)
    .option('--unset <key>', 'remove a setting (repeatable; client_secret removes the stored secret)', collect)
    .option('--client-secret-stdin', 'read the client secret from standard input')
    .option('--client-secret-env <VAR>', 'take the client secret from environment variable VAR')
    .addOption(json())
    .action(run(paypalSettings));
  registerBatches(payouts, run);
}

const replayNote = (replayed: boolean) => (replayed ? ' (replayed: this Idempotency-Key was used before; nothing new happened)' : '');

export async function list(
  io: Io,
  opts: ListOptions &
    SortOptions & { status?: string; statusExclude?: string; member?: string; currency?: string; method?: string; after?: string; before?: string },
): Promise<ListPage<Payout>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(payoutSchemas.list, {
      status: opts.status,
      status_exclude: opts.statusExclude,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      currency: opts.currency,
      method: opts.method,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.payouts.list(query)), page: query.page };
  });
}

function printPayout(io: Io, p: Payout): void {
  const rows: [string, unknown][] = [
    ['id', p.id],
    ['member', `${p.display_name} (${p.login}, id ${p.member_id})`],
    ['amount', `${p.amount} ${p.currency}`],
    ['method', p.method],
    ['details', p.details],
    ['note', p.note],
    ['status', p.status],
    ['reference', p.reference],
    ['reason', p.reason],
    ['entries', [p.entry_id, p.return_entry_id].filter((e) => e !== null).join(', ')],
    ['created', `${p.created_at} by ${p.actor}`],
    ['closed', p.closed_at ? `${p.closed_at} by ${p.closed_by}` : null],
  ];
  printFields(io, rows, 10);
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payout = await ctx.payouts.get(params.id);
    if (opts.json) return printJson(io, payout);
    printPayout(io, payout);
  });
}

export async function create(
  io: Io,
  member: string,
  amount: string,
  opts: { method: string; currency?: string; details?: string; note?: string; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(payoutSchemas.create, {
      member_id: await memberId(ctx, member),
      amount,
      currency: opts.currency,
      method: opts.method,
      details: opts.details,
      note: opts.note,
    });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.create', { params: {}, payload }, 201, (once) =>
      ctx.payouts.create(payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    const { payout, balance } = result;
    io.stdout.write(
      `payout ${payout.id} created: ${payout.amount} ${payout.currency} to ${payout.login} via ${payout.method} (${payout.status}); available balance ${balance.available} ${balance.currency}${replayNote(replayed)}\n`,
    );
  });
}

export async function complete(io: Io, id: string, opts: { reference?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payload = await validateInput(payoutSchemas.complete, { reference: opts.reference });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.complete', { params, payload }, 200, (once) =>
      ctx.payouts.complete(params.id, payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    io.stdout.write(`payout ${result.payout.id} paid: ${result.payout.amount} ${result.payout.currency} to ${result.payout.login}${replayNote(replayed)}\n`);
  });
}

export async function cancel(io: Io, id: string, opts: { reason: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payload = await validateInput(payoutSchemas.cancel, { reason: opts.reason });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.cancel', { params, payload }, 200, (once) =>
      ctx.payouts.cancel(params.id, payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    const { payout, balance } = result;
    io.stdout.write(
      `payout ${payout.id} cancelled: ${payout.amount} ${payout.currency} credited back to ${payout.login}; available balance ${balance.available} ${balance.currency}${replayNote(replayed)}\n`,
    );
  });
}

export async function paypalSettings(
  io: Io,
  opts: { set?: string[]; unset?: string[]; clientSecretStdin?: boolean; clientSecretEnv?: string; json?: boolean },
): Promise<void> {
  // Keys typed by the operator: `--set __proto__=x` is a (refused) setting name, nothing more.
  const values = dict<string | null>();
  for (const pair of opts.set ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set expects key=value, got "${pair.slice(0, 64)}"`);
    const key = pair.slice(0, eq);
    if (key === 'client_secret')
      throw new UsageError('client_secret is a secret: pass it with --client-secret-stdin or --client-secret-env VAR, never on the command line');
    values[key] = pair.slice(eq + 1);
  }
  for (const key of opts.unset ?? []) values[key] = null;
  if (opts.clientSecretStdin && opts.clientSecretEnv) throw new UsageError('give --client-secret-stdin or --client-secret-env, not both');
  if (opts.clientSecretEnv) {
    const v = io.env[opts.clientSecretEnv];
    if (v === undefined || v === '') throw new UsageError(`--client-secret-env ${opts.clientSecretEnv}: the environment variable is not set`);
    values.client_secret = v;
  }
  if (opts.clientSecretStdin) {
    const v = (await readStdin(io)).replace(/\r?\n$/, '');
    if (!v) throw new UsageError('--client-secret-stdin: standard input is empty');
    values.client_secret = v;
  }
  const changing = Object.keys(values).length > 0;
  const payload = changing ? await validateInput(payoutSchemas.paypalSettings, values) : null;
  await withContext(io, async (ctx) => {
    const view = payload ? await ctx.paypal.configure(payload, 'cli') : await ctx.paypal.view();
    if (opts.json) return printJson(io, view);
    if (changing)
      io.stdout.write(
        `PayPal Payouts settings stored (${Object.keys(values).join(', ')}); ${view.configured ? 'ready' : `still missing ${view.missing.join(', ')}`}\n`,
      );
    else printPayPal(io, view);
  });
}

function printPayPal(io: Io, s: PayPalSettingsView): void {
  printFields(
    io,
    [
      ['configured', s.configured ? 'yes' : `no (set ${s.missing.join(', ')})`],
      ['client_id', s.client_id],
      ['client_secret', s.client_secret_set ? 'set' : 'not set'],
      ['environment', s.environment],
      ['base_url', `${s.base_url}${s.base_url_override ? ' (override)' : ''}`],
      ['stored', s.stored.join(', ') || '(none)'],
    ],
    14,
  );
}
