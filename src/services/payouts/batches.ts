// Payout batches: pending payouts of one method and currency sent together through one channel
// (channels.ts). A payout is in at most one live batch: `payouts.batch_id`, set by one guarded
// UPDATE (`... AND status = 'pending' AND batch_id IS NULL`) that must move every item or the
// batch rolls back, so two batches racing for a payout cannot both have it. Payouts whose
// destination another member uses too are held out with the other member named (a common fraud)
// until an administrator releases them into a later batch with a note. Results close each payout
// through the payout service's own guarded paths (paid, or cancelled with its `payout_return`),
// so a result read twice, or two uploads at once, close a payout once.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import { orderClause, pageClause, ListWhere, type OneOrMany } from '../../db/lists.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import { currencyExponent, formatAmount, toMinor } from '../../money.js';
import type { Once } from '../idempotency/index.js';
import type { JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import {
  channelFor,
  csvChannel,
  itemRef,
  type BatchFile,
  type BatchItem,
  type ChannelName,
  type ExtraChannels,
  type ItemResult,
  type PayoutChannel,
} from './channels.js';
import type { PayoutService, PayoutStatus } from './index.js';
import { sepaIbanOf, sepaMessageId } from './sepa.js';
import { pain002 } from './sepa-report.js';
import { parse } from 'csv-parse/sync';

export const BATCH_STATUSES = ['open', 'sent', 'finished', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** The most items in one batch (PayPal Payouts' own limit). */
export const MAX_BATCH_ITEMS = 15_000;
/** Items in a batch made by filter when the request does not say. */
export const DEFAULT_BATCH_ITEMS = 1_000;

/** A batch as the API shows it (amounts as decimal strings). */
export interface PayoutBatch {
  id: number;
  method: string;
  currency: string;
  channel: ChannelName;
  status: BatchStatus;
  item_count: number;
  held_count: number;
  total: string;
  /** The items' payouts by status now (paid, cancelled = failed, pending = not final yet). */
  paid_count: number;
  failed_count: number;
  pending_count: number;
  note: string | null;
  file_name: string | null;
  provider_batch_id: string | null;
  provider_status: string | null;
  actor: string;
  closed_by: string | null;
  created_at: string;
  sent_at: string | null;
  finished_at: string | null;
  cancelled_at: string | null;
}

/** One item of a batch, with its payout's current status. */
export interface BatchItemView extends BatchItem {
  status: PayoutStatus;
  reference: string | null;
  reason: string | null;
  /** Set when a held payout was released into this batch by an administrator. */
  override_note: string | null;
}

/** A payout held out of a batch, and why. */
export interface BatchHold {
  payout_id: number;
  member_id: number;
  login: string;
  display_name: string;
  amount: string;
  currency: string;
  method: string;
  details: string | null;
  /** `shared_destination` (may be released by `override`) or `channel_check` (e.g. a bad IBAN). */
  code: 'shared_destination' | 'channel_check';
  reason: string;
}

export interface BatchDetail {
  batch: PayoutBatch;
  items: BatchItemView[];
  held: BatchHold[];
}

/** What a batch is made of: an explicit list of payouts, or filters over the pending ones. */
export interface CreateBatchInput {
  payout_ids?: number[];
  method?: string;
  currency?: string;
  member_id?: number;
  /** Payouts requested strictly before this time. */
  before?: Date;
  max_items?: number;
  /** Held payouts (shared destination) to put in anyway; needs `override_note`. */
  override?: number[];
  override_note?: string | null;
  note?: string | null;
}

/** What a batch made now would hold: its items (without refs: there is no batch yet) and the held payouts. */
export interface BatchPreview {
  method: string;
  currency: string;
  channel: ChannelName;
  item_count: number;
  total: string;
  items: Omit<BatchItem, 'item_ref'>[];
  held: BatchHold[];
}

export interface BatchWhere {
  status?: OneOrMany<BatchStatus>;
  method?: OneOrMany<string>;
  currency?: OneOrMany<string>;
}

export const BATCH_ORDERBY = { id: 'b.id', created_at: 'b.created_at', total: 'b.total', status: 'b.status' } as const;
export type BatchOrderby = keyof typeof BATCH_ORDERBY;

export interface BatchFilters extends BatchWhere {
  orderby?: BatchOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** What applying results did to each item. */
export interface AppliedResult {
  item_ref: string;
  payout_id: number;
  outcome: ItemResult['outcome'];
  /** `applied`: the payout closed now; `unchanged`: it was already so (a result read twice) or still pending; `conflict`: it closed the other way before. */
  effect: 'applied' | 'unchanged' | 'conflict';
  status: PayoutStatus;
}

export interface ResultsOutcome {
  batch: PayoutBatch;
  results: AppliedResult[];
}

export interface PayoutBatchServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  events: WebhookEvents;
  payouts: PayoutService;
  /** The site currency: a batch made by filter without a currency takes it. */
  currency: string;
  /** The channels other than CSV that are installed. */
  channels?: ExtraChannels;
  /** Where a sent API batch's `payouts.batch_status` job is queued. */
  jobs?: Pick<JobService, 'enqueue'>;
}

/** The job that reads a sent API batch's results back (src/jobs/types/payouts-batch-status.ts). */
export const BATCH_STATUS_JOB = 'payouts.batch_status';

/** What following a sent API batch did. */
export interface FollowOutcome extends ResultsOutcome {
  /** Whether every item is final now (the batch is finished). */
  done: boolean;
}

/** A payout as a batch plans it. */
interface Candidate extends Omit<BatchItem, 'item_ref'> {
  status: PayoutStatus;
  batch_id: number | null;
}

/**
 * A destination as compared between members: an e-mail address lower-cased; SEPA details (an IBAN
 * in print or electronic format, with a BIC or a name, or as JSON) by the IBAN in electronic
 * format; anything else (an account number) without spaces and upper-cased. Null when there is none.
 */
export function destinationKey(details: string | null): string | null {
  const text = details?.trim();
  if (!text) return null;
  const iban = sepaIbanOf(text);
  if (iban) return iban;
  return text.includes('@') ? text.toLowerCase() : text.replace(/\s+/g, '').toUpperCase();
}

const optionalText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const clean = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

const CANDIDATE_COLUMNS = 'p.id, p.member_id, u.login, u.display_name, p.amount, p.currency, p.method, p.details, p.status, p.batch_id, p.reference, p.reason';

function shapeCandidate(row: Record<string, unknown>): Candidate {
  const currency = String(row.currency);
  const minor = toMinor(row.amount);
  return {
    payout_id: toInt(row.id),
    member_id: toInt(row.member_id),
    login: String(row.login),
    display_name: String(row.display_name ?? ''),
    amount: formatAmount(minor, currency),
    amount_minor: minor,
    currency,
    method: String(row.method),
    details: optionalText(row.details),
    status: row.status as PayoutStatus,
    batch_id: row.batch_id === null || row.batch_id === undefined ? null : toInt(row.batch_id),
  };
}

const asItem = (c: Candidate, batchId: number): BatchItem => ({
  payout_id: c.payout_id,
  member_id: c.member_id,
  login: c.login,
  display_name: c.display_name,
  amount: c.amount,
  amount_minor: c.amount_minor,
  currency: c.currency,
  method: c.method,
  details: c.details,
  item_ref: itemRef(batchId, c.payout_id),
});

const holdOf = (c: Candidate, code: BatchHold['code'], reason: string): BatchHold => ({
  payout_id: c.payout_id,
  member_id: c.member_id,
  login: c.login,
  display_name: c.display_name,
  amount: c.amount,
  currency: c.currency,
  method: c.method,
  details: c.details,
  code,
  reason: reason.slice(0, 1000),
});

interface Plan {
  method: string;
  currency: string;
  channel: PayoutChannel;
  items: Candidate[];
  held: BatchHold[];
  overridden: Set<number>;
  total: number;
}

/** Makes, lists, sends, closes and cancels payout batches. */
export class PayoutBatchService {
  constructor(private readonly deps: PayoutBatchServiceDeps) {}

  /**
   * A member's erasure: their login, e-mail and name inside the batches' free text (a hold's reason
   * names the other member sharing a destination; notes written by administrators), in `t`.
   */
  async eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    const { db } = this.deps;
    let changed = 0;
    changed += await replaceInColumns(db, t, { table: 'payout_batch_holds', key: 'id', columns: ['reason'] }, replacements);
    changed += await replaceInColumns(db, t, { table: 'payout_batch_items', key: 'id', columns: ['override_note'] }, replacements);
    changed += await replaceInColumns(db, t, { table: 'payout_batches', key: 'id', columns: ['note'] }, replacements);
    return changed;
  }

  /** What `create` would make now, written nowhere: the items and the held payouts with their reasons. */
  async preview(input: CreateBatchInput): Promise<BatchPreview> {
    const plan = await this.plan(input);
    return {
      method: plan.method,
      currency: plan.currency,
      channel: plan.channel.name,
      item_count: plan.items.length,
      total: formatAmount(plan.total, plan.currency),
      items: plan.items.map(({ status: _s, batch_id: _b, ...item }) => item),
      held: plan.held,
    };
  }

  /**
   * Makes a batch of pending payouts not in a live batch, all of one method and currency. Refusals:
   * 400 svc_payout_batch_method_required, svc_payout_override_note_required,
   * svc_payout_override_not_selected; 404 svc_payout_not_found; 409 svc_payout_batch_mixed,
   * svc_payout_batch_not_pending, svc_payout_in_batch, svc_payout_batch_empty,
   * svc_payout_batch_conflict (another batch took some of them meanwhile), and the channel's
   * svc_payout_channel_unavailable / svc_payout_channel_currency.
   */
  async create(
    input: CreateBatchInput,
    actor: string,
    once?: Once<{ batch: PayoutBatch; held: BatchHold[] }>,
  ): Promise<{ batch: PayoutBatch; held: BatchHold[] }> {
    const { db, clock } = this.deps;
    try {
      const result = await db.transaction(async (t) => {
        await once?.claim?.(t);
        const plan = await this.plan(input, t);
        const now = clock.now();
        const { insertId } = await db.execute(
          `INSERT INTO payout_batches (method, currency, channel, status, item_count, held_count, total, note, actor, created_at, updated_at)
           VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?)`,
          [plan.method, plan.currency, plan.channel.name, plan.items.length, plan.held.length, plan.total, clean(input.note), actor, now, now],
          t,
        );
        const id = insertId!;
        const ids = plan.items.map((c) => c.payout_id);
        // The one write that puts payouts in a batch: every one of them still pending and in no
        // live batch, or the whole batch rolls back.
        for (let i = 0; i < ids.length; i += 500) {
          const chunk = ids.slice(i, i + 500);
          const { affected } = await db.execute(
            `UPDATE payouts SET batch_id = ? WHERE id IN (${chunk.map(() => '?').join(', ')}) AND status = 'pending' AND batch_id IS NULL`,
            [id, ...chunk],
            t,
          );
          if (affected !== chunk.length)
            throw new ServiceError('svc_payout_batch_conflict', 'Another batch took some of these payouts at the same time; nothing was made. Try again.', 409);
        }
        const overrideNote = clean(input.override_note);
        await db.insertMany(
          'payout_batch_items',
          ['batch_id', 'payout_id', 'override_note', 'created_at'],
          plan.items.map((c) => [id, c.payout_id, plan.overridden.has(c.payout_id) ? overrideNote : null, now]),
          t,
        );
        await db.insertMany(
          'payout_batch_holds',
          ['batch_id', 'payout_id', 'code', 'reason', 'created_at'],
          plan.held.map((h) => [id, h.payout_id, h.code, h.reason, now]),
          t,
        );
        // A file channel makes its file now, so a batch whose file cannot be made is not made.
        const file = await plan.channel.file?.(
          { id, created_at: now.toISOString(), currency: plan.currency },
          plan.items.map((c) => asItem(c, id)),
        );
        if (file) await db.execute('UPDATE payout_batches SET file_name = ? WHERE id = ?', [file.name.slice(0, 191), id], t);
        const result = { batch: await this.readBatch(id, t), held: plan.held };
        await once?.record(result, t);
        await this.deps.events.emit(t, HOOKS.payoutBatchCreated, result.batch, { actor });
        return { result, overridden: [...plan.overridden] };
      });
      const { batch, held } = result.result;
      this.deps.logger.info('payouts', 'Payout batch created', {
        batch_id: batch.id,
        method: batch.method,
        currency: batch.currency,
        channel: batch.channel,
        items: batch.item_count,
        held: held.length,
        total: batch.total,
        actor,
      });
      if (result.overridden.length)
        this.deps.logger.warning('payouts', 'Held payouts released into a batch', {
          batch_id: batch.id,
          payout_ids: result.overridden,
          note: clean(input.override_note),
          actor,
        });
      return result.result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('payouts', 'Payout batch refused', { code: err.code, actor });
      throw err;
    }
  }

  /** Batches, newest first; filtered by status, method and currency; paged. */
  async list(filters: BatchFilters): Promise<{ items: PayoutBatch[]; total: number }> {
    for (const c of [filters.currency ?? []].flat()) currencyExponent(c);
    const where = new ListWhere().anyOf('b.status', filters.status).anyOf('b.method', filters.method).anyOf('b.currency', filters.currency);
    const order = orderClause(BATCH_ORDERBY, filters, 'b.id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT b.* FROM payout_batches b ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM payout_batches b ${where.sql}`, where.params),
    ]);
    return { items: await this.shapeBatches(rows), total: toInt(count[0].n) };
  }

  /** One batch with its items and held payouts. 404 svc_payout_batch_not_found. */
  async get(id: number): Promise<BatchDetail> {
    const batch = await this.readBatch(id);
    const db = this.deps.db;
    const [items, held] = await Promise.all([
      db.select<Record<string, unknown>>(
        `SELECT ${CANDIDATE_COLUMNS}, i.override_note FROM payout_batch_items i JOIN payouts p ON p.id = i.payout_id
         LEFT JOIN users u ON u.id = p.member_id WHERE i.batch_id = ? ORDER BY i.payout_id`,
        [id],
      ),
      db.select<Record<string, unknown>>(
        `SELECT ${CANDIDATE_COLUMNS}, h.code, h.reason AS hold_reason FROM payout_batch_holds h JOIN payouts p ON p.id = h.payout_id
         LEFT JOIN users u ON u.id = p.member_id WHERE h.batch_id = ? ORDER BY h.payout_id`,
        [id],
      ),
    ]);
    return {
      batch,
      items: items.map((row) => {
        const { batch_id: _b, ...c } = shapeCandidate(row);
        return {
          ...c,
          item_ref: itemRef(id, c.payout_id),
          reference: optionalText(row.reference),
          reason: optionalText(row.reason),
          override_note: optionalText(row.override_note),
        };
      }),
      held: held.map((row) => holdOf(shapeCandidate(row), row.code as BatchHold['code'], String(row.hold_reason))),
    };
  }

  /** The file finance downloads (file channels). 404 svc_payout_batch_not_found, 409 svc_payout_batch_cancelled / svc_payout_batch_no_file. */
  async file(id: number): Promise<BatchFile> {
    const detail = await this.get(id);
    const { batch } = detail;
    if (batch.status === 'cancelled') throw new ServiceError('svc_payout_batch_cancelled', `Payout batch ${id} was cancelled; it has no file.`, 409);
    const channel = this.channelNamed(batch.channel);
    if (!channel.file) throw new ServiceError('svc_payout_batch_no_file', `Payout batch ${id} is sent through the ${batch.channel} API; it has no file.`, 409);
    const items = detail.items.map(({ status: _s, reference: _r, reason: _x, override_note: _o, ...item }) => item);
    return channel.file({ id, created_at: batch.created_at, currency: batch.currency }, items);
  }

  /**
   * Sends an open batch. File channels: marks it sent (finance has taken the file to its bank or
   * tool). API channels (PayPal): hands the items to the provider, stores the provider's batch id
   * and status as soon as they are known, marks the batch sent and queues its `payouts.batch_status`
   * job. Sending again (a retry, a second click, a send whose answer was lost) never pays twice:
   * the provider knows the batch by an id made from ours and answers the batch it already has. A
   * sent batch answers as it is. 409 svc_payout_batch_closed for a finished or cancelled one; the
   * provider's errors (503 svc_paypal_not_configured, svc_paypal_unavailable, ...) change nothing.
   */
  async send(id: number, actor: string, once?: Once<{ batch: PayoutBatch }>): Promise<{ batch: PayoutBatch }> {
    const { db, clock } = this.deps;
    const batch = await this.readBatch(id);
    if (batch.status === 'finished' || batch.status === 'cancelled')
      throw new ServiceError('svc_payout_batch_closed', `Payout batch ${id} is ${batch.status}.`, 409, { batch_status: batch.status });
    const channel = this.channelNamed(batch.channel);
    if (!channel.file && !channel.send)
      throw new ServiceError('svc_payout_channel_unavailable', `The ${batch.channel} channel cannot send batches.`, 409, { channel: batch.channel });
    // Only an open batch goes to the provider: a sent one without a provider id had its results
    // applied by hand (an uploaded file), and sending it now could pay those payouts again.
    if (channel.send && batch.status === 'open' && !batch.provider_batch_id) {
      const detail = await this.get(id);
      // Only the payouts still pending: one closed meanwhile (cancelled at its member's erasure) is not paid.
      const items = detail.items.filter((i) => i.status === 'pending').map(({ status: _s, reference: _r, reason: _x, override_note: _o, ...item }) => item);
      if (items.length === 0) throw new ServiceError('svc_payout_batch_empty', `Payout batch ${id} has no pending payout left to send.`, 409, { batch_id: id });
      let sent: { provider_batch_id: string; provider_status: string };
      try {
        sent = await channel.send({ id, currency: batch.currency }, items);
      } catch (err) {
        if (err instanceof ServiceError) this.deps.logger.warning('payouts', 'Payout batch not sent', { batch_id: id, code: err.code, actor });
        throw err;
      }
      // Stored first and on its own, so whatever happens next the batch can be followed.
      await db.execute('UPDATE payout_batches SET provider_batch_id = ?, provider_status = ?, updated_at = ? WHERE id = ? AND provider_batch_id IS NULL', [
        sent.provider_batch_id.slice(0, 191),
        sent.provider_status.slice(0, 32),
        clock.now(),
        id,
      ]);
      this.deps.logger.info('payouts', 'Payout batch handed to the provider', {
        batch_id: id,
        channel: batch.channel,
        provider_batch_id: sent.provider_batch_id,
        provider_status: sent.provider_status,
        actor,
      });
    }
    if (once) {
      await db.transaction(async (t) => {
        await once.claim?.(t);
        await this.markSent(id, actor, t);
        await once.record({ batch: await this.readBatch(id, t) }, t);
      });
    } else await db.transaction((t) => this.markSent(id, actor, t));
    const now = await this.readBatch(id);
    if (channel.status && now.status === 'sent' && now.provider_batch_id) await this.queueFollowUp(id, actor);
    return { batch: now };
  }

  /**
   * Reads a sent API batch back from its provider and applies the items' results (paid with the
   * provider's reference; refused ones cancelled with the provider's reason and their amount
   * returned, once each however often this runs). `done` once no item is pending (the batch is
   * finished). A batch that is not a sent API batch answers as it is, done when finished. Run by the
   * `payouts.batch_status` job.
   */
  async followUp(id: number, actor: string): Promise<FollowOutcome> {
    const batch = await this.readBatch(id);
    const channel = this.channelNamed(batch.channel);
    if (!channel.status || batch.status !== 'sent' || !batch.provider_batch_id) return { batch, results: [], done: batch.status !== 'sent' };
    const read = await channel.status(batch.provider_batch_id);
    await this.deps.db.execute('UPDATE payout_batches SET provider_status = ?, updated_at = ? WHERE id = ?', [
      read.provider_status.slice(0, 32),
      this.deps.clock.now(),
      id,
    ]);
    const outcome = await this.applyResults(id, read.results, actor);
    return { ...outcome, done: outcome.batch.status === 'finished' };
  }

  /** The sent API batches still waiting for results (the `payouts.batch_status` job without a batch). */
  async followed(): Promise<number[]> {
    const installed = (['paypal', 'sepa'] as const).filter((c) => this.deps.channels?.[c]?.status);
    if (!installed.length) return [];
    const rows = await this.deps.db.select<{ id: unknown }>(
      `SELECT id FROM payout_batches WHERE status = 'sent' AND provider_batch_id IS NOT NULL AND channel IN (${installed.map(() => '?').join(', ')}) ORDER BY id`,
      installed,
    );
    return rows.map((r) => toInt(r.id));
  }

  /**
   * Applies the bank's pain.002 status report to a SEPA batch: rejected items are cancelled with the
   * bank's reason (their amount returned once), accepted ones paid, the rest left pending. 400
   * svc_sepa_report_invalid (not a readable report), 409 svc_payout_report_mismatch (the report
   * answers another file than this batch's), and applyResults' refusals.
   */
  async applyReport(
    id: number,
    xml: string,
    actor: string,
  ): Promise<ResultsOutcome & { report: { original_msg_id: string; version: string; group_status: string | null } }> {
    const batch = await this.readBatch(id);
    if (batch.channel !== 'sepa')
      throw new ServiceError('svc_payout_report_mismatch', `Payout batch ${id} is a ${batch.channel} batch; a pain.002 report answers a SEPA batch.`, 409, {
        channel: batch.channel,
      });
    const rows = await this.deps.db.select<{ payout_id: unknown }>('SELECT payout_id FROM payout_batch_items WHERE batch_id = ? ORDER BY payout_id', [id]);
    const report = pain002(
      xml,
      rows.map((r) => itemRef(id, toInt(r.payout_id))),
    );
    const expected = sepaMessageId(id);
    if (report.original_msg_id !== expected)
      throw new ServiceError(
        'svc_payout_report_mismatch',
        `This report answers the file ${report.original_msg_id.slice(0, 64)}, not batch ${id}'s (${expected}); nothing was applied.`,
        409,
        { original_msg_id: report.original_msg_id.slice(0, 64), expected },
      );
    const outcome = await this.applyResults(id, report.results, actor);
    return { ...outcome, report: { original_msg_id: report.original_msg_id, version: report.version, group_status: report.group_status } };
  }

  /**
   * Cancels an open batch: its payouts leave it (still pending, free for another batch). 409
   * svc_payout_batch_sent once it was sent (its payments may be under way), svc_payout_batch_closed
   * when finished or cancelled.
   */
  async cancel(id: number, actor: string): Promise<{ batch: PayoutBatch }> {
    const { db, clock } = this.deps;
    await db.transaction(async (t) => {
      const [row] = await db.select<Record<string, unknown>>(`SELECT id, status FROM payout_batches WHERE id = ?${db.forUpdate()}`, [id], t);
      if (!row) throw new ServiceError('svc_payout_batch_not_found', `Payout batch ${id} not found.`, 404);
      if (row.status === 'sent')
        throw new ServiceError(
          'svc_payout_batch_sent',
          `Payout batch ${id} was sent; its payments may be under way, so it cannot be cancelled. Apply its results.`,
          409,
        );
      const now = clock.now();
      const { affected } = await db.execute(
        "UPDATE payout_batches SET status = 'cancelled', cancelled_at = ?, closed_by = ?, updated_at = ? WHERE id = ? AND status = 'open'",
        [now, actor, now, id],
        t,
      );
      if (affected !== 1) throw new ServiceError('svc_payout_batch_closed', `Payout batch ${id} is ${String(row.status)}.`, 409, { batch_status: row.status });
      await db.execute("UPDATE payouts SET batch_id = NULL WHERE batch_id = ? AND status = 'pending'", [id], t);
    });
    this.deps.logger.info('payouts', 'Payout batch cancelled', { batch_id: id, actor });
    return { batch: await this.readBatch(id) };
  }

  /**
   * Applies a provider's or a file's results: `paid` marks the payout paid with the reference,
   * `failed` cancels it with the reason (its amount credited back), `pending` changes nothing.
   * Every payout closes once: a result read again is `unchanged`. Results for an open batch mark it
   * sent first (it evidently went); once no item is pending the batch is `finished`. 400
   * svc_payout_results_invalid (an item not in the batch; nothing applied), 404
   * svc_payout_batch_not_found, 409 svc_payout_batch_cancelled.
   */
  async applyResults(id: number, results: ItemResult[], actor: string): Promise<ResultsOutcome> {
    const batch = await this.readBatch(id);
    if (batch.status === 'cancelled') throw new ServiceError('svc_payout_batch_cancelled', `Payout batch ${id} was cancelled; it has no results.`, 409);
    const rows = await this.deps.db.select<{ payout_id: unknown }>('SELECT payout_id FROM payout_batch_items WHERE batch_id = ?', [id]);
    const known = new Map(rows.map((r) => [itemRef(id, toInt(r.payout_id)), toInt(r.payout_id)]));
    const problems: { row: number; message: string }[] = [];
    const seen = new Map<string, string>();
    results.forEach((r, i) => {
      if (!known.has(r.item_ref)) problems.push({ row: i + 1, message: `item ${r.item_ref} is not in batch ${id}` });
      else if (seen.has(r.item_ref) && seen.get(r.item_ref) !== r.outcome) problems.push({ row: i + 1, message: `item ${r.item_ref} is given two outcomes` });
      seen.set(r.item_ref, r.outcome);
    });
    if (problems.length)
      throw new ServiceError('svc_payout_results_invalid', `The results do not fit batch ${id}: ${problems[0].message}; nothing was applied.`, 400, {
        problems: problems.slice(0, 50),
      });
    if (batch.status === 'open' && results.some((r) => r.outcome !== 'pending')) await this.deps.db.transaction((t) => this.markSent(id, actor, t));
    // Each item once, as its first row gives it.
    const taken = new Set<string>();
    const first = results.filter((r) => !taken.has(r.item_ref) && taken.add(r.item_ref));
    // All at once: each item is a payout of its own, and their writes commit in groups
    // (src/db/group-commit.ts), each answered as alone. A fault stops nothing else; it is thrown
    // once every item has its answer (a second upload finds the applied ones unchanged).
    const settled = await Promise.allSettled(
      first.map(async (r): Promise<AppliedResult> => {
        const payoutId = known.get(r.item_ref)!;
        return { item_ref: r.item_ref, payout_id: payoutId, outcome: r.outcome, ...(await this.applyOne(id, payoutId, r, actor)) };
      }),
    );
    const fault = settled.find((s) => s.status === 'rejected');
    if (fault) throw fault.reason;
    const out = settled.map((s) => (s as PromiseFulfilledResult<AppliedResult>).value);
    await this.finishIfDone(id, actor);
    const applied = out.filter((r) => r.effect === 'applied').length;
    const conflicts = out.filter((r) => r.effect === 'conflict').length;
    this.deps.logger.info('payouts', 'Payout batch results applied', { batch_id: id, results: out.length, applied, conflicts, actor });
    return { batch: await this.readBatch(id), results: out };
  }

  /**
   * An uploaded result file: a pain.002 report (given as `pain002`, or a `csv` that is an XML
   * document) through applyReport, else a result CSV through parseResultsCsv and applyResults.
   */
  async applyUpload(id: number, input: { csv?: string; pain002?: string }, actor: string): Promise<ResultsOutcome> {
    this.refuseByHand(await this.readBatch(id));
    const text = input.pain002 ?? input.csv ?? '';
    if (input.pain002 !== undefined || /^\uFEFF?\s*</.test(text)) return this.applyReport(id, text.replace(/^\uFEFF/, ''), actor);
    return this.applyResults(id, this.parseResultsCsv(id, text), actor);
  }

  /**
   * A batch a provider holds (PayPal answered its send with a batch id) takes its results from
   * the provider only (`payouts.batch_status`): results by hand could close a payout paid or
   * cancelled that the provider is about to settle the other way. 409 svc_payout_batch_with_provider.
   */
  private refuseByHand(batch: PayoutBatch): void {
    if (batch.provider_batch_id)
      throw new ServiceError(
        'svc_payout_batch_with_provider',
        `Payout batch ${batch.id} was sent to ${batch.channel} (${batch.provider_batch_id}); its results are read from there by the payouts.batch_status job, not given by hand.`,
        409,
        { provider_batch_id: batch.provider_batch_id },
      );
  }

  /** Marks every item still pending paid (file channels: the bank paid the whole file). */
  async markPaid(id: number, input: { reference?: string | null }, actor: string): Promise<ResultsOutcome> {
    const batch = await this.readBatch(id);
    this.refuseByHand(batch);
    if (batch.status === 'cancelled') throw new ServiceError('svc_payout_batch_cancelled', `Payout batch ${id} was cancelled; it has no results.`, 409);
    const rows = await this.deps.db.select<{ id: unknown }>("SELECT id FROM payouts WHERE batch_id = ? AND status = 'pending' ORDER BY id", [id]);
    const reference = clean(input.reference);
    return this.applyResults(
      id,
      rows.map((r) => ({ item_ref: itemRef(id, toInt(r.id)), outcome: 'paid' as const, reference })),
      actor,
    );
  }

  /**
   * A result CSV as item results: a header row with `item_ref` or `payout_id`, `status` (paid or
   * failed), and optionally `reference` and `reason`. 400 svc_payout_results_invalid.
   */
  parseResultsCsv(id: number, text: string): ItemResult[] {
    let records: Record<string, string>[];
    try {
      records = parse(text, {
        bom: true,
        columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
        skip_empty_lines: true,
        trim: true,
      });
    } catch (err) {
      throw new ServiceError('svc_payout_results_invalid', `The result file is not a readable CSV: ${(err as Error).message}`, 400);
    }
    const problems: { row: number; message: string }[] = [];
    const results: ItemResult[] = [];
    records.forEach((rec, i) => {
      const row = i + 2;
      const ref = rec.item_ref || (rec.payout_id && /^\d+$/.test(rec.payout_id) ? itemRef(id, Number(rec.payout_id)) : '');
      const status = (rec.status ?? '').toLowerCase();
      if (!ref) problems.push({ row, message: 'needs an item_ref or a payout_id' });
      else if (status !== 'paid' && status !== 'failed') problems.push({ row, message: `status must be paid or failed, not "${status.slice(0, 20)}"` });
      else results.push({ item_ref: ref, outcome: status, reference: clean(rec.reference), reason: clean(rec.reason) });
    });
    if (records.length === 0) problems.push({ row: 1, message: 'no result rows' });
    if (problems.length)
      throw new ServiceError('svc_payout_results_invalid', `Result file row ${problems[0].row}: ${problems[0].message}; nothing was applied.`, 400, {
        problems: problems.slice(0, 50),
      });
    return results;
  }

  private channelNamed(name: ChannelName): PayoutChannel {
    if (name === 'csv') return csvChannel;
    const channel = this.deps.channels?.[name];
    if (!channel) throw new ServiceError('svc_payout_channel_unavailable', `The ${name} channel is not installed.`, 409, { channel: name });
    return channel;
  }

  private async applyOne(batchId: number, payoutId: number, r: ItemResult, actor: string): Promise<Pick<AppliedResult, 'effect' | 'status'>> {
    const { payouts } = this.deps;
    if (r.outcome === 'pending') return { effect: 'unchanged', status: (await payouts.get(payoutId)).status };
    const want: PayoutStatus = r.outcome === 'paid' ? 'paid' : 'cancelled';
    try {
      if (r.outcome === 'paid') await payouts.complete(payoutId, { reference: r.reference ?? null }, actor, undefined, { batchId });
      else await payouts.cancel(payoutId, { reason: clean(r.reason) ?? 'Refused by the payment provider' }, actor, undefined, { batchId });
      return { effect: 'applied', status: want };
    } catch (err) {
      if (!(err instanceof ServiceError) || (err.code !== 'svc_payout_closed' && err.code !== 'svc_payout_not_in_batch')) throw err;
      const now = (await payouts.get(payoutId)).status;
      return { effect: now === want ? 'unchanged' : 'conflict', status: now };
    }
  }

  /** open → sent, once (the event fires for the request that moved it), in `t`. */
  private async markSent(id: number, actor: string, t: Transaction): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const { affected } = await db.execute(
      "UPDATE payout_batches SET status = 'sent', sent_at = ?, updated_at = ? WHERE id = ? AND status = 'open'",
      [now, now, id],
      t,
    );
    if (affected !== 1) return;
    await this.deps.events.emit(t, HOOKS.payoutBatchSent, await this.readBatch(id, t), { actor });
    this.deps.logger.info('payouts', 'Payout batch sent', { batch_id: id, actor });
  }

  /** Queues the batch's `payouts.batch_status` job, unless one is already queued or running. */
  private async queueFollowUp(id: number, actor: string): Promise<void> {
    if (!this.deps.jobs) return;
    try {
      await this.deps.jobs.enqueue(BATCH_STATUS_JOB, { batch_id: id }, actor, { unique: true });
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'svc_job_already_running') throw err;
    }
  }

  /** sent → finished when no item is pending any more, once. */
  private async finishIfDone(id: number, actor: string): Promise<void> {
    const { db, clock } = this.deps;
    const finished = await db.transaction(async (t) => {
      const [row] = await db.select<Record<string, unknown>>(`SELECT status FROM payout_batches WHERE id = ?${db.forUpdate()}`, [id], t);
      if (row?.status !== 'sent') return false;
      const [left] = await db.select<{ n: unknown }>(
        "SELECT COUNT(*) AS n FROM payout_batch_items i JOIN payouts p ON p.id = i.payout_id WHERE i.batch_id = ? AND p.status = 'pending'",
        [id],
        t,
      );
      if (toInt(left.n) > 0) return false;
      const now = clock.now();
      const { affected } = await db.execute(
        "UPDATE payout_batches SET status = 'finished', finished_at = ?, updated_at = ? WHERE id = ? AND status = 'sent'",
        [now, now, id],
        t,
      );
      if (affected === 1) await this.deps.events.emit(t, HOOKS.payoutBatchFinished, await this.readBatch(id, t), { actor });
      return affected === 1;
    });
    if (finished) this.deps.logger.info('payouts', 'Payout batch finished', { batch_id: id, actor });
  }

  /** The payouts a batch made now would hold, and those it would hold out. */
  private async plan(input: CreateBatchInput, t?: Transaction): Promise<Plan> {
    const db = this.deps.db;
    const explicit = [...new Set(input.payout_ids ?? [])];
    let candidates: Candidate[];
    let method: string;
    let currency: string;
    if (explicit.length) {
      if (explicit.length > MAX_BATCH_ITEMS) throw new ServiceError('svc_payout_batch_too_large', `A batch holds at most ${MAX_BATCH_ITEMS} payouts.`, 400);
      candidates = [];
      for (let i = 0; i < explicit.length; i += 500) {
        const chunk = explicit.slice(i, i + 500);
        const rows = await db.select<Record<string, unknown>>(
          `SELECT ${CANDIDATE_COLUMNS} FROM payouts p LEFT JOIN users u ON u.id = p.member_id WHERE p.id IN (${chunk.map(() => '?').join(', ')}) ORDER BY p.id`,
          chunk,
          t,
        );
        candidates.push(...rows.map(shapeCandidate));
      }
      const found = new Set(candidates.map((c) => c.payout_id));
      const missing = explicit.filter((id) => !found.has(id));
      if (missing.length) throw new ServiceError('svc_payout_not_found', `Payout ${missing[0]} not found.`, 404, { payout_ids: missing.slice(0, 50) });
      const closed = candidates.filter((c) => c.status !== 'pending');
      if (closed.length)
        throw new ServiceError(
          'svc_payout_batch_not_pending',
          `Payout ${closed[0].payout_id} is ${closed[0].status}; only pending payouts go in a batch.`,
          409,
          {
            payout_ids: closed.slice(0, 50).map((c) => c.payout_id),
          },
        );
      const batched = candidates.filter((c) => c.batch_id !== null);
      if (batched.length)
        throw new ServiceError('svc_payout_in_batch', `Payout ${batched[0].payout_id} is already in payout batch ${batched[0].batch_id}.`, 409, {
          payout_ids: batched.slice(0, 50).map((c) => c.payout_id),
          batch_ids: [...new Set(batched.map((c) => c.batch_id))],
        });
      method = clean(input.method) ?? candidates[0].method;
      currency = input.currency ?? candidates[0].currency;
      const odd = candidates.filter((c) => c.method !== method || c.currency !== currency);
      if (odd.length)
        throw new ServiceError(
          'svc_payout_batch_mixed',
          `A batch is of one method and currency: payout ${odd[0].payout_id} is ${odd[0].method} in ${odd[0].currency}, not ${method} in ${currency}.`,
          409,
          { payout_ids: odd.slice(0, 50).map((c) => c.payout_id) },
        );
    } else {
      const m = clean(input.method);
      if (!m) throw new ServiceError('svc_payout_batch_method_required', 'A batch made by filter needs a method (or list the payouts).', 400);
      method = m;
      currency = input.currency ?? this.deps.currency;
      currencyExponent(currency);
      const limit = Math.min(input.max_items ?? DEFAULT_BATCH_ITEMS, MAX_BATCH_ITEMS);
      const where = new ListWhere()
        .add("p.status = 'pending'")
        .add('p.batch_id IS NULL')
        .eq('p.method', method)
        .eq('p.currency', currency)
        .eq('p.member_id', input.member_id)
        .before('p.created_at', input.before);
      const rows = await db.select<Record<string, unknown>>(
        `SELECT ${CANDIDATE_COLUMNS} FROM payouts p LEFT JOIN users u ON u.id = p.member_id ${where.sql} ORDER BY p.id LIMIT ${limit}`,
        where.params,
        t,
      );
      candidates = rows.map(shapeCandidate);
    }
    const channel = channelFor(method, currency, this.deps.channels);
    const override = new Set(input.override ?? []);
    if (override.size && !clean(input.override_note))
      throw new ServiceError('svc_payout_override_note_required', 'Releasing held payouts into a batch needs a note saying why.', 400);
    const selected = new Set(candidates.map((c) => c.payout_id));
    const stray = [...override].filter((id) => !selected.has(id));
    if (stray.length)
      throw new ServiceError(
        'svc_payout_override_not_selected',
        `Payout ${stray[0]} is not among the payouts of this batch; it cannot be released into it.`,
        400,
        {
          payout_ids: stray.slice(0, 50),
        },
      );

    const shared = await this.sharedDestinations(candidates, t);
    const items: Candidate[] = [];
    const held: BatchHold[] = [];
    const overridden = new Set<number>();
    for (const c of candidates) {
      const refused = channel.check(asItem(c, 0));
      if (refused) {
        held.push(holdOf(c, 'channel_check', refused));
        continue;
      }
      const others = shared.get(c.payout_id);
      if (others?.length) {
        if (!override.has(c.payout_id)) {
          const named = others.slice(0, 10).map((o) => `${o.login} (member ${o.member_id})`);
          const more = others.length > 10 ? ` and ${others.length - 10} more` : '';
          held.push(holdOf(c, 'shared_destination', `The destination is also used by ${named.join(', ')}${more}.`));
          continue;
        }
        overridden.add(c.payout_id);
      }
      items.push(c);
    }
    if (items.length === 0)
      throw new ServiceError(
        'svc_payout_batch_empty',
        held.length ? `No payout can go in this batch: all ${held.length} are held (see held).` : `No pending ${method} payout in ${currency} matches.`,
        409,
        { held: held.slice(0, 50) },
      );
    return { method, currency, channel, items, held, overridden, total: items.reduce((s, c) => s + c.amount_minor, 0) };
  }

  /**
   * For each candidate whose destination another member's payout (any status) has too, those
   * other members. Destinations are compared normalised (destinationKey), so it is done here and
   * not in SQL: one pass over the distinct (member, details) pairs.
   */
  private async sharedDestinations(candidates: Candidate[], t?: Transaction): Promise<Map<number, { member_id: number; login: string }[]>> {
    const wanted = new Map<string, Candidate[]>();
    for (const c of candidates) {
      const key = destinationKey(c.details);
      if (key) wanted.set(key, [...(wanted.get(key) ?? []), c]);
    }
    const out = new Map<number, { member_id: number; login: string }[]>();
    if (wanted.size === 0) return out;
    const rows = await this.deps.db.select<Record<string, unknown>>(
      'SELECT DISTINCT p.member_id, u.login, p.details FROM payouts p LEFT JOIN users u ON u.id = p.member_id WHERE p.details IS NOT NULL',
      [],
      t,
    );
    const users = new Map<string, Map<number, string>>();
    for (const r of rows) {
      const key = destinationKey(optionalText(r.details));
      if (!key || !wanted.has(key)) continue;
      const members = users.get(key) ?? new Map<number, string>();
      members.set(toInt(r.member_id), String(r.login));
      users.set(key, members);
    }
    for (const [key, cs] of wanted) {
      const members = users.get(key);
      if (!members) continue;
      for (const c of cs) {
        const others = [...members].filter(([id]) => id !== c.member_id).map(([member_id, login]) => ({ member_id, login }));
        others.sort((a, b) => a.member_id - b.member_id);
        if (others.length) out.set(c.payout_id, others);
      }
    }
    return out;
  }

  private async readBatch(id: number, t?: Transaction): Promise<PayoutBatch> {
    const rows = await this.deps.db.select<Record<string, unknown>>('SELECT b.* FROM payout_batches b WHERE b.id = ?', [id], t);
    if (!rows.length) throw new ServiceError('svc_payout_batch_not_found', `Payout batch ${id} not found.`, 404);
    return (await this.shapeBatches(rows, t))[0];
  }

  private async shapeBatches(rows: Record<string, unknown>[], t?: Transaction): Promise<PayoutBatch[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => toInt(r.id));
    const counts = await this.deps.db.select<{ batch_id: unknown; status: unknown; n: unknown }>(
      `SELECT i.batch_id, p.status, COUNT(*) AS n FROM payout_batch_items i JOIN payouts p ON p.id = i.payout_id
       WHERE i.batch_id IN (${ids.map(() => '?').join(', ')}) GROUP BY i.batch_id, p.status`,
      ids,
      t,
    );
    const by = new Map<string, number>();
    for (const c of counts) by.set(`${toInt(c.batch_id)}:${String(c.status)}`, toInt(c.n));
    return rows.map((row) => {
      const id = toInt(row.id);
      const currency = String(row.currency);
      return {
        id,
        method: String(row.method),
        currency,
        channel: row.channel as ChannelName,
        status: row.status as BatchStatus,
        item_count: toInt(row.item_count),
        held_count: toInt(row.held_count),
        total: formatAmount(toMinor(row.total), currency),
        paid_count: by.get(`${id}:paid`) ?? 0,
        failed_count: by.get(`${id}:cancelled`) ?? 0,
        pending_count: by.get(`${id}:pending`) ?? 0,
        note: optionalText(row.note),
        file_name: optionalText(row.file_name),
        provider_batch_id: optionalText(row.provider_batch_id),
        provider_status: optionalText(row.provider_status),
        actor: String(row.actor),
        closed_by: optionalText(row.closed_by),
        created_at: toIso(row.created_at)!,
        sent_at: toIso(row.sent_at),
        finished_at: toIso(row.finished_at),
        cancelled_at: toIso(row.cancelled_at),
      };
    });
  }
}
