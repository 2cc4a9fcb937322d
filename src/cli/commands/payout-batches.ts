// `cashtrack payouts batch create|list|show|file|send|paid|results|cancel`: the payout batch schemas
// and service (services/payouts/batches.ts), in-process.
import { readFile, writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { ServiceError } from '../../errors.js';
import type { BatchDetail, PayoutBatch, ResultsOutcome } from '../../services/payouts/index.js';
import { BATCH_ORDERBY, BATCH_STATUSES, payoutSchemas } from '../../services/payouts/schemas.js';
import { memberId, printFields, printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(payouts: Command, run: Run): void {
  const batch = payouts.command('batch').description('payout batches: pending payouts of one method and currency paid together (a CSV file for finance)');
  batch
    .command('create [ids...]')
    .description('make a batch of the listed payout ids, or of the pending payouts the filters choose (oldest first)')
    .option('--method <method>', 'payouts of this method (required without ids)')
    .option('--currency <code>', 'payouts in this currency (default: the site currency)')
    .option('--member <member>', "only this member's payouts (id or login)")
    .option('--before <time>', 'requested strictly before this ISO 8601 time')
    .option('--max <n>', 'at most this many payouts (default 1000, at most 15000)')
    .option('--override <ids>', 'held payouts (shared destination) to put in anyway, comma-separated; needs --override-note')
    .option('--override-note <text>', 'why the held payouts may go (logged)')
    .option('--note <text>', 'a note for administrators')
    .option('--preview', 'show what the batch would hold and hold out, and make nothing')
    .option('--idempotency-key <key>', 'make the batch at most once for this key')
    .addOption(json())
    .action(run(create));
  listCommand(
    batch
      .command('list')
      .description('payout batches, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', BATCH_STATUSES))
      .option('--method <methods>', 'only these methods, comma-separated')
      .option('--currency <codes>', 'only these currencies, comma-separated')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(BATCH_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'batches',
      perPage: 20,
      columns: ['id', 'method', 'currency', 'status', 'item_count', 'held_count', 'total', 'paid_count', 'failed_count', 'created_at'],
      count: (total) => `${total} batch(es)`,
    },
    run,
    list,
  );
  batch.command('show <id>').description('one batch with its items and held payouts').addOption(json()).action(run(show));
  batch
    .command('file <id>')
    .description("write the batch's file (CSV, or a SEPA batch's pain.001 XML) to --out, or to standard output")
    .option('--out <file>', 'write it here (mode 0600) instead of standard output')
    .action(run(file));
  batch
    .command('send <id>')
    .description('send an open batch: a file batch is marked sent (its file taken to the bank), a PayPal batch goes to PayPal')
    .addOption(json())
    .action(run(send));
  batch
    .command('paid <id>')
    .description('mark every item still pending paid')
    .option('--reference <ref>', "the payment's reference")
    .addOption(json())
    .action(run(paid));
  batch
    .command('results <id> <file>')
    .description("apply a result CSV (item_ref or payout_id, status paid|failed, reference, reason), or a SEPA batch's pain.002 status report (XML)")
    .addOption(json())
    .action(run(results));
  batch.command('cancel <id>').description('cancel a batch not yet sent: its payouts leave it, still pending').addOption(json()).action(run(cancel));
}

const ids = (text: string | undefined): string[] | undefined => (text === undefined ? undefined : text.split(',').map((s) => s.trim()));

export async function create(
  io: Io,
  listed: string[],
  opts: {
    method?: string;
    currency?: string;
    member?: string;
    before?: string;
    max?: string;
    override?: string;
    overrideNote?: string;
    note?: string;
    preview?: boolean;
    idempotencyKey?: string;
    json?: boolean;
  },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(payoutSchemas.batchCreate, {
      payout_ids: listed.length ? listed : undefined,
      method: opts.method,
      currency: opts.currency,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      before: opts.before,
      max_items: opts.max,
      override: ids(opts.override),
      override_note: opts.overrideNote,
      note: opts.note,
    });
    if (opts.preview) {
      const preview = await ctx.payoutBatches.preview(payload);
      if (opts.json) return printJson(io, preview);
      io.stdout.write(`would batch ${preview.item_count} ${preview.method} payout(s), ${preview.total} ${preview.currency}, as ${preview.channel}\n`);
      printHeld(io, preview.held);
      return;
    }
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.batches.create', { params: {}, payload }, 201, (once) =>
      ctx.payoutBatches.create(payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    const b = result.batch;
    io.stdout.write(
      `batch ${b.id} created: ${b.item_count} ${b.method} payout(s), ${b.total} ${b.currency}, ${b.held_count} held${replayed ? ' (replayed: this Idempotency-Key was used before; nothing new happened)' : ''}\n`,
    );
    printHeld(io, result.held);
  });
}

function printHeld(io: Io, held: BatchDetail['held']): void {
  for (const h of held) io.stdout.write(`  held: payout ${h.payout_id} (${h.login}, ${h.amount} ${h.currency}): ${h.reason}\n`);
}

export async function list(io: Io, opts: ListOptions & SortOptions & { status?: string; method?: string; currency?: string }): Promise<ListPage<PayoutBatch>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(payoutSchemas.batchList, {
      status: opts.status,
      method: opts.method,
      currency: opts.currency,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.payoutBatches.list(query)), page: query.page };
  });
}

function printBatch(io: Io, b: PayoutBatch): void {
  printFields(
    io,
    [
      ['id', b.id],
      ['method', `${b.method} (${b.channel})`],
      ['status', b.status],
      ['total', `${b.total} ${b.currency}`],
      ['items', `${b.item_count}: ${b.paid_count} paid, ${b.failed_count} failed, ${b.pending_count} pending`],
      ['held', b.held_count],
      ['file', b.file_name],
      ['note', b.note],
      ['created', `${b.created_at} by ${b.actor}`],
      ['sent', b.sent_at],
      ['finished', b.finished_at],
      ['cancelled', b.cancelled_at ? `${b.cancelled_at} by ${b.closed_by}` : null],
    ],
    10,
  );
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const detail = await ctx.payoutBatches.get(params.id);
    if (opts.json) return printJson(io, detail);
    printBatch(io, detail.batch);
    io.stdout.write('\n');
    printTable(io, detail.items, ['item_ref', 'payout_id', 'login', 'amount', 'currency', 'status', 'reference', 'reason']);
    printHeld(io, detail.held);
  });
}

export async function file(io: Io, id: string, opts: { out?: string }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const made = await ctx.payoutBatches.file(params.id);
    if (!opts.out) return void io.stdout.write(made.body);
    try {
      await writeFile(opts.out, made.body, { mode: 0o600 });
    } catch (err) {
      throw new ServiceError('svc_file_unwritable', `Cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
    }
    io.stdout.write(`wrote ${made.name} to ${opts.out}\n`);
  });
}

export async function send(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const { batch } = await ctx.payoutBatches.send(params.id, 'cli');
    if (opts.json) return printJson(io, { batch });
    io.stdout.write(
      `batch ${batch.id} ${batch.status}${batch.provider_batch_id ? ` (provider batch ${batch.provider_batch_id}, ${batch.provider_status})` : ''}\n`,
    );
  });
}

function printOutcome(io: Io, outcome: ResultsOutcome): void {
  const n = (effect: string) => outcome.results.filter((r) => r.effect === effect).length;
  const b = outcome.batch;
  io.stdout.write(
    `batch ${b.id} ${b.status}: ${n('applied')} applied, ${n('unchanged')} unchanged, ${n('conflict')} conflict(s); ${b.paid_count} paid, ${b.failed_count} failed, ${b.pending_count} pending\n`,
  );
  for (const r of outcome.results) if (r.effect === 'conflict') io.stdout.write(`  conflict: ${r.item_ref} is ${r.status}, the result says ${r.outcome}\n`);
}

export async function paid(io: Io, id: string, opts: { reference?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const payload = await validateInput(payoutSchemas.batchPaid, { reference: opts.reference });
    const outcome = await ctx.payoutBatches.markPaid(params.id, payload, 'cli');
    if (opts.json) return printJson(io, outcome);
    printOutcome(io, outcome);
  });
}

export async function results(io: Io, id: string, path: string, opts: { json?: boolean }): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ServiceError('svc_file_unreadable', `Cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
  }
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const payload = await validateInput(payoutSchemas.batchResults, { csv: text });
    const outcome = await ctx.payoutBatches.applyUpload(params.id, payload, 'cli');
    if (opts.json) return printJson(io, outcome);
    printOutcome(io, outcome);
  });
}

export async function cancel(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.batchId, { id });
    const { batch } = await ctx.payoutBatches.cancel(params.id, 'cli');
    if (opts.json) return printJson(io, { batch });
    io.stdout.write(`batch ${batch.id} cancelled: its ${batch.item_count} payout(s) are free for another batch\n`);
  });
}
