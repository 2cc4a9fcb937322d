// Members' withdrawals. Creating a payout posts its `payout` debit at once, in the same
// transaction (the funds are held; the ledger's guarded UPDATE refuses any overdraft); cancelling
// posts a `payout_return` credit; a paid or cancelled payout never changes again.
import { countByStatus, ListWhere, orderClause, pageClause, valuesOf, type OneOrMany, type StatusCounts } from '../../db/lists.js';
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import { Database } from '../../db/database.js';
import { replaceInColumns, walkRows, type Replacement } from '../../db/erasure.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import { currencyExponent, formatAmount, parseAmount, toMinor } from '../../money.js';
import { shapeEntry, type Balance, type Discrepancy, type Entry, type LedgerService } from '../ledger/index.js';
import type { Once } from '../idempotency/index.js';
import type { LogService } from '../logs/index.js';

export {
  BATCH_ORDERBY,
  BATCH_STATUSES,
  DEFAULT_BATCH_ITEMS,
  destinationKey,
  MAX_BATCH_ITEMS,
  BATCH_STATUS_JOB,
  PayoutBatchService,
  type FollowOutcome,
  type AppliedResult,
  type BatchDetail,
  type BatchFilters,
  type BatchHold,
  type BatchItemView,
  type BatchOrderby,
  type BatchPreview,
  type BatchStatus,
  type BatchWhere,
  type CreateBatchInput,
  type PayoutBatch,
  type ResultsOutcome,
} from './batches.js';
export {
  channelFor,
  csvChannel,
  CSV_COLUMNS,
  itemRef,
  type BatchFile,
  type BatchItem,
  type ChannelName,
  type ExtraChannels,
  type ItemResult,
  type PayoutChannel,
  type ProviderBatch,
} from './channels.js';
/** How the reason of a payout cancelled by its member's erasure starts. */
export const ERASURE_REASON = 'Cancelled at erasure';

export const PAYOUT_STATUSES = ['pending', 'paid', 'cancelled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** A payout as the API and CLI show it (decimal strings). `details` is for administrators only. */
export interface Payout {
  id: number;
  member_id: number;
  login: string;
  display_name: string;
  amount: string;
  currency: string;
  method: string;
  details: string | null;
  note: string | null;
  status: PayoutStatus;
  reference: string | null;
  reason: string | null;
  entry_id: number | null;
  return_entry_id: number | null;
  /** The live batch the payout is in, if any (services/payouts/batches.ts). */
  batch_id: number | null;
  actor: string;
  closed_by: string | null;
  created_at: string;
  closed_at: string | null;
}

/** Who closes a payout: by hand (no batch), or a batch's results (`batchId`). */
export interface PayoutVia {
  batchId?: number;
}

export interface CreatePayoutInput {
  member_id: number;
  amount: string;
  currency?: string;
  method: string;
  details?: string | null;
  note?: string | null;
}

/** The fields `GET /payouts` sorts by, and the column each is. */
export const PAYOUT_ORDERBY = { id: 'p.id', created_at: 'p.created_at', amount: 'p.amount', status: 'p.status' } as const;
export type PayoutOrderby = keyof typeof PAYOUT_ORDERBY;

/** The filters of the payout list and of its counts per status. */
export interface PayoutWhere {
  status?: OneOrMany<PayoutStatus>;
  status_exclude?: OneOrMany<PayoutStatus>;
  member_id?: number;
  currency?: OneOrMany<string>;
  method?: OneOrMany<string>;
  after?: Date;
  before?: Date;
}

export interface PayoutFilters extends PayoutWhere {
  /** Default id (newest first). */
  orderby?: PayoutOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /payouts/counts`: the list's, without paging, sort and the status ones. */
export type PayoutCountFilters = Omit<PayoutWhere, 'status' | 'status_exclude'>;

function payoutWhere(f: PayoutWhere): ListWhere {
  for (const c of valuesOf(f.currency)) currencyExponent(c);
  return new ListWhere()
    .anyOf('p.status', f.status)
    .noneOf('p.status', f.status_exclude)
    .eq('p.member_id', f.member_id)
    .anyOf('p.currency', f.currency)
    .anyOf('p.method', f.method)
    .after('p.created_at', f.after)
    .before('p.created_at', f.before);
}

export interface PayoutServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  ledger: LedgerService;
  /** The outbox: payout events go to webhooks in the payout's transaction, to hooks after commit. */
  events: WebhookEvents;
  /** The site currency: the one the minimum is expressed in. */
  currency: string;
  /** `payouts.minimum`, a decimal string in the site currency. */
  minimum: string;
}

const COLUMNS =
  'p.id, p.member_id, u.login, u.display_name, p.amount, p.currency, p.method, p.details, p.note, p.status, p.reference, p.reason, p.entry_id, p.return_entry_id, p.batch_id, p.actor, p.closed_by, p.created_at, p.updated_at';
// A LEFT JOIN (every payout has its member: a foreign key) so that MariaDB reads payouts first and
// walks the sort's index; with an inner join it chose to start from users and sort every payout.
const FROM = 'payouts p LEFT JOIN users u ON u.id = p.member_id';

const optionalInt = (v: unknown): number | null => (v === null || v === undefined ? null : toInt(v));
const optionalText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
/** Trimmed text, or null when there is none. */
const clean = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

function shapePayout(row: Record<string, unknown>): Payout {
  const currency = String(row.currency);
  const status = row.status as PayoutStatus;
  return {
    id: toInt(row.id),
    member_id: toInt(row.member_id),
    login: String(row.login),
    display_name: String(row.display_name),
    amount: formatAmount(toMinor(row.amount), currency),
    currency,
    method: String(row.method),
    details: optionalText(row.details),
    note: optionalText(row.note),
    status,
    reference: optionalText(row.reference),
    reason: optionalText(row.reason),
    entry_id: optionalInt(row.entry_id),
    return_entry_id: optionalInt(row.return_entry_id),
    batch_id: optionalInt(row.batch_id),
    actor: String(row.actor),
    closed_by: optionalText(row.closed_by),
    created_at: toIso(row.created_at)!,
    // Only closing a payout updates its row.
    closed_at: status === 'pending' ? null : toIso(row.updated_at),
  };
}

/** Creates, completes, cancels and lists members' payouts. */
export class PayoutService {
  private minimumRead: number | undefined;

  constructor(private readonly deps: PayoutServiceDeps) {}

  /**
   * The configured minimum in minor units, read on first use: the currency's exponent comes from
   * ICU, whose first use costs some 20 ms, which a command that pays nobody should not pay at
   * start-up. The daemon reads it as it starts, so a minimum the currency cannot express stops it
   * there (500 svc_invalid_config, key payouts.minimum).
   */
  private get minimumMinor(): number {
    if (this.minimumRead === undefined) {
      try {
        this.minimumRead = parseAmount(this.deps.minimum, this.deps.currency, { allowZero: true, field: 'payouts.minimum' });
      } catch (err) {
        throw new ServiceError('svc_invalid_config', `Invalid configuration payouts.minimum: ${(err as Error).message}`, 500, { key: 'payouts.minimum' });
      }
    }
    return this.minimumRead;
  }

  /** The configured minimum, in the site currency (it applies to site-currency payouts only). */
  get minimum(): { amount: string; currency: string } {
    return { amount: formatAmount(this.minimumMinor, this.deps.currency), currency: this.deps.currency };
  }

  /**
   * Creates a pending payout and posts its debit in one transaction: 201's body is the payout, the
   * debit entry and the new balance. Refusals: 400 svc_invalid_amount / svc_invalid_currency /
   * svc_method_required, 404 svc_member_not_found, 409 svc_payout_below_minimum /
   * svc_insufficient_funds. The minimum is in the site currency and applies to payouts in that
   * currency only (there are no exchange rates to convert it with).
   */
  async create(
    input: CreatePayoutInput,
    actor: string,
    once?: Once<{ payout: Payout; entry: Entry; balance: Balance }>,
  ): Promise<{ payout: Payout; entry: Entry; balance: Balance }> {
    const currency = input.currency ?? this.deps.currency;
    try {
      const minor = parseAmount(input.amount, currency);
      const method = clean(input.method);
      if (!method) throw new ServiceError('svc_method_required', 'A payout needs a method, e.g. paypal or bank_transfer.', 400);
      const { db, ledger } = this.deps;
      const result = await db.grouped(async (t) => {
        await once?.claim?.(t);
        // An unknown member is refused before a payout below the minimum, as it always was.
        await ledger.requireMember(input.member_id, t);
        if (currency === this.deps.currency && minor < this.minimumMinor) {
          const minimum = formatAmount(this.minimumMinor, currency);
          throw new ServiceError('svc_payout_below_minimum', `The smallest payout is ${minimum} ${currency}.`, 409, { minimum, currency });
        }
        // Payouts of one member queue on the balance row instead of deadlocking.
        await ledger.lockBalance(input.member_id, currency, t);
        const now = this.deps.clock.now();
        const { insertId } = await db.execute(
          "INSERT INTO payouts (member_id, amount, currency, method, details, note, status, actor, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
          [input.member_id, minor, currency, method, clean(input.details), clean(input.note), actor, now, now],
          t,
        );
        const id = insertId!;
        const entry = await ledger.post(
          {
            memberId: input.member_id,
            currency,
            type: 'payout',
            amount: -minor,
            sourceType: 'payout',
            sourceId: id,
            note: `Payout ${id} via ${method}`.slice(0, 500),
            actor,
          },
          t,
        );
        await db.execute('UPDATE payouts SET entry_id = ? WHERE id = ?', [entry.id, id], t);
        const result = { payout: await this.read(id, t), entry: shapeEntry(entry), balance: await ledger.balanceOf(input.member_id, currency, t) };
        await once?.record(result, t);
        await this.deps.events.emit(t, HOOKS.payoutCreated, result.payout, { actor });
        return result;
      });
      this.deps.logger.info('payouts', 'Payout created', {
        payout_id: result.payout.id,
        member_id: input.member_id,
        amount: result.payout.amount,
        currency,
        method,
        entry_id: result.entry.id,
        actor,
      });
      return result;
    } catch (err) {
      // Never the details or the note: they may hold account data.
      if (err instanceof ServiceError)
        this.deps.logger.warning('payouts', 'Payout refused', {
          code: err.code,
          member_id: input.member_id,
          amount: String(input.amount).slice(0, 40),
          currency: String(currency).slice(0, 8),
          actor,
        });
      throw err;
    }
  }

  /**
   * Marks a pending payout paid (the money has left). 404 svc_payout_not_found, 409
   * svc_payout_closed, 409 svc_payout_in_batch when it is in a live batch (its batch's results
   * close it, passing `via.batchId`).
   */
  async complete(
    id: number,
    input: { reference?: string | null },
    actor: string,
    once?: Once<{ payout: Payout }>,
    via: PayoutVia = {},
  ): Promise<{ payout: Payout }> {
    try {
      const result = await this.deps.db.grouped(async (t) => {
        await once?.claim?.(t);
        await this.lockPending(id, t, via);
        await this.close(id, 'paid', { reference: clean(input.reference) }, actor, t);
        const result = { payout: await this.read(id, t) };
        await once?.record(result, t);
        await this.deps.events.emit(t, HOOKS.payoutStatusChanged, result.payout, { from: 'pending', to: 'paid', actor });
        return result;
      });
      this.deps.logger.info('payouts', 'Payout completed', {
        payout_id: id,
        member_id: result.payout.member_id,
        amount: result.payout.amount,
        currency: result.payout.currency,
        actor,
      });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('payouts', 'Payout completion refused', { code: err.code, payout_id: id, actor });
      throw err;
    }
  }

  /**
   * Cancels a pending payout and credits its amount back (`payout_return`) in one transaction.
   * The reason is required. 404 svc_payout_not_found, 409 svc_payout_closed, 409
   * svc_payout_in_batch (see `complete`).
   */
  async cancel(
    id: number,
    input: { reason: string },
    actor: string,
    once?: Once<{ payout: Payout; entry: Entry; balance: Balance }>,
    via: PayoutVia = {},
  ): Promise<{ payout: Payout; entry: Entry; balance: Balance }> {
    try {
      const reason = clean(input.reason);
      if (!reason) throw new ServiceError('svc_reason_required', 'Cancelling a payout needs a reason.', 400);
      const result = await this.deps.db.grouped(async (t) => {
        await once?.claim?.(t);
        const result = await this.cancelWithin(id, reason, actor, t, via);
        await once?.record(result, t);
        return result;
      });
      this.deps.logger.info('payouts', 'Payout cancelled', {
        payout_id: id,
        member_id: result.payout.member_id,
        amount: result.payout.amount,
        currency: result.payout.currency,
        entry_id: result.entry.id,
        actor,
      });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('payouts', 'Payout cancellation refused', { code: err.code, payout_id: id, actor });
      throw err;
    }
  }

  /**
   * Cancels pending payout `id` inside the caller's transaction: the status change, the
   * `payout_return` credit and the event (409 svc_payout_closed when it is no longer pending).
   * `cancel` runs it in a transaction of its own; a member's erasure runs it in theirs.
   */
  async cancelWithin(
    id: number,
    reason: string,
    actor: string,
    t: Transaction,
    via: PayoutVia = {},
  ): Promise<{ payout: Payout; entry: Entry; balance: Balance }> {
    const { db, ledger } = this.deps;
    const row = await this.lockPending(id, t, via);
    await this.close(id, 'cancelled', { reason }, actor, t);
    await ledger.lockBalance(row.member_id, row.currency, t);
    const entry = await ledger.post(
      {
        memberId: row.member_id,
        currency: row.currency,
        type: 'payout_return',
        amount: row.amount,
        sourceType: 'payout',
        sourceId: id,
        note: `Payout ${id} cancelled: ${reason}`.slice(0, 500),
        actor,
      },
      t,
    );
    await db.execute('UPDATE payouts SET return_entry_id = ? WHERE id = ?', [entry.id, id], t);
    const result = { payout: await this.read(id, t), entry: shapeEntry(entry), balance: await ledger.balanceOf(row.member_id, row.currency, t) };
    await this.deps.events.emit(t, HOOKS.payoutStatusChanged, result.payout, { from: 'pending', to: 'cancelled', actor });
    return result;
  }

  /** The ids of a member's pending payouts (locked in `t`): what an erasure refuses or cancels. */
  async pendingOf(memberId: number, t: Transaction): Promise<number[]> {
    const rows = await this.deps.db.select<{ id: unknown }>(
      `SELECT id FROM payouts WHERE member_id = ? AND status = 'pending' ORDER BY id${this.deps.db.forUpdate()}`,
      [memberId],
      t,
    );
    return rows.map((r) => toInt(r.id));
  }

  /** Every payout of a member with its details, oldest first, page by page (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Payout> {
    for await (const row of walkRows(this.deps.db, `SELECT ${COLUMNS} FROM ${FROM} WHERE p.member_id = ?`, [memberId], { column: 'p.id', field: 'id' })) {
      yield shapePayout(row);
    }
  }

  /** The member's payouts cancelled by their erasure (the reason says so): what a repeated erase answers. */
  async cancelledAtErasure(memberId: number, t?: Transaction): Promise<number[]> {
    const rows = await this.deps.db.select<{ id: unknown }>(
      "SELECT id FROM payouts WHERE member_id = ? AND status = 'cancelled' AND reason LIKE ? ESCAPE '!' ORDER BY id",
      [memberId, Database.likePrefix(ERASURE_REASON)],
      t,
    );
    return rows.map((r) => toInt(r.id));
  }

  /**
   * At an erasure, in `t`: every payout of the member keeps its amount, status and entries; its
   * `details` (account data) are wiped and the person's words replaced in its note, reason and
   * reference. Answers how many payouts changed.
   */
  async eraseMember(memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<number> {
    const { affected } = await this.deps.db.execute('UPDATE payouts SET details = NULL WHERE member_id = ? AND details IS NOT NULL', [memberId], t);
    const replaced = await replaceInColumns(
      this.deps.db,
      t,
      { table: 'payouts', key: 'id', columns: ['note', 'reason', 'reference'], where: 'member_id = ?', params: [memberId] },
      replacements,
    );
    return affected + replaced;
  }

  async get(id: number): Promise<Payout> {
    return this.read(id);
  }

  /** Payouts, newest first; filtered by status, member and currency; paged. */
  async list(filters: PayoutFilters): Promise<{ items: Payout[]; total: number }> {
    const where = payoutWhere(filters);
    const order = orderClause(PAYOUT_ORDERBY, filters, 'p.id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM ${FROM} ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM payouts p ${where.sql}`, where.params),
    ]);
    return { items: rows.map(shapePayout), total: toInt(count[0].n) };
  }

  /** The next `limit` payouts of the list's filters after id `afterId`, in id order (an export's keyset walk). */
  async listAfter(filters: PayoutWhere, afterId: number, limit: number): Promise<Payout[]> {
    const where = payoutWhere(filters).add('p.id > ?', afterId);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM ${FROM} ${where.sql} ORDER BY p.id LIMIT ${Math.max(1, Math.floor(limit))}`,
      where.params,
    );
    return rows.map(shapePayout);
  }

  /** The views row of the list: payouts per status (every status, 0 included) under the list's other filters. */
  counts(filters: PayoutCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'payouts p', 'p.status', payoutWhere(filters), PAYOUT_STATUSES);
  }

  /**
   * Checks every payout against its ledger entries: a `payout` debit of its amount for each, a
   * `payout_return` credit exactly for the cancelled ones, and no payout entry without its payout.
   */
  async verify(): Promise<Discrepancy[]> {
    const db = this.deps.db;
    const out: Discrepancy[] = [];
    const bad = await db.select<Record<string, unknown>>(
      `SELECT p.id, p.member_id, p.currency, p.status FROM payouts p
       LEFT JOIN ledger_entries e ON e.id = p.entry_id
       LEFT JOIN ledger_entries r ON r.id = p.return_entry_id
       WHERE e.id IS NULL OR e.type <> 'payout' OR e.amount <> -p.amount OR e.member_id <> p.member_id OR e.currency <> p.currency
          OR (CASE WHEN p.status = 'cancelled' THEN 1 ELSE 0 END) <> (CASE WHEN r.id IS NULL THEN 0 ELSE 1 END)
          OR (r.id IS NOT NULL AND (r.type <> 'payout_return' OR r.amount <> p.amount OR r.member_id <> p.member_id OR r.currency <> p.currency))`,
    );
    for (const r of bad) {
      out.push({
        kind: 'payout_mismatch',
        member_id: toInt(r.member_id),
        currency: String(r.currency),
        detail: `payout ${toInt(r.id)} (${String(r.status)}) does not match its ledger entries`,
      });
    }
    const orphans = await db.select<Record<string, unknown>>(
      `SELECT e.id, e.member_id, e.currency FROM ledger_entries e
       WHERE e.type IN ('payout', 'payout_return')
         AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.entry_id = e.id)
         AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.return_entry_id = e.id)`,
    );
    for (const r of orphans)
      out.push({
        kind: 'payout_entry_orphan',
        entry_id: toInt(r.id),
        member_id: toInt(r.member_id),
        currency: String(r.currency),
        detail: 'payout entry that no payout points at',
      });
    return out;
  }

  /** One payout (inside `t` when given); 404 svc_payout_not_found. */
  private async read(id: number, t?: Transaction): Promise<Payout> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM ${FROM} WHERE p.id = ?`, [id], t);
    if (!row) throw new ServiceError('svc_payout_not_found', `Payout ${id} not found.`, 404);
    return shapePayout(row);
  }

  /**
   * Locks the payout row (FOR UPDATE on MariaDB; a SQLite write transaction is exclusive already)
   * and makes sure it is still pending, so two concurrent state changes apply exactly once.
   */
  private async lockPending(id: number, t: Transaction, via: PayoutVia = {}): Promise<{ member_id: number; currency: string; amount: number }> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, member_id, currency, amount, status, batch_id FROM payouts WHERE id = ?${this.deps.db.forUpdate()}`,
      [id],
      t,
    );
    if (!row) throw new ServiceError('svc_payout_not_found', `Payout ${id} not found.`, 404);
    if (row.status !== 'pending')
      throw new ServiceError('svc_payout_closed', `Payout ${id} is already ${String(row.status)}; it cannot change again.`, 409, { payout_status: row.status });
    const batchId = optionalInt(row.batch_id);
    if (via.batchId !== undefined && batchId !== via.batchId)
      throw new ServiceError('svc_payout_not_in_batch', `Payout ${id} is not in batch ${via.batchId}.`, 409, { batch_id: batchId });
    if (via.batchId === undefined && batchId !== null)
      throw new ServiceError(
        'svc_payout_in_batch',
        `Payout ${id} is in payout batch ${batchId}: the batch's results close it (or cancel the batch first).`,
        409,
        { batch_id: batchId },
      );
    return { member_id: toInt(row.member_id), currency: String(row.currency), amount: toMinor(row.amount) };
  }

  /** The guarded status change: only a pending payout moves, whatever else raced. */
  private async close(
    id: number,
    status: 'paid' | 'cancelled',
    fields: { reference?: string | null; reason?: string | null },
    actor: string,
    t: Transaction,
  ): Promise<void> {
    const { affected } = await this.deps.db.execute(
      "UPDATE payouts SET status = ?, reference = COALESCE(?, reference), reason = COALESCE(?, reason), closed_by = ?, updated_at = ? WHERE id = ? AND status = 'pending'",
      [status, fields.reference ?? null, fields.reason ?? null, actor, this.deps.clock.now(), id],
      t,
    );
    if (affected !== 1) throw new ServiceError('svc_payout_closed', `Payout ${id} is no longer pending; it cannot change again.`, 409);
  }
}

// SEPA credit transfer files: destinations, pain.001, pain.002 and the debtor account (issue 20).
export { SepaSettingsStore, type SepaSettingsView } from './sepa-settings.js';
export {
  pain001,
  sepaDestination,
  sepaIbanOf,
  sepaMessageId,
  SEPA_VERSIONS,
  type SepaBatch,
  type SepaDebtor,
  type SepaDestination,
  type SepaVersion,
} from './sepa.js';
export { pain002, type StatusReport } from './sepa-report.js';
export { PayPalSettings, PAYPAL_SETTING_NAMES, type PayPalSettingsView } from './paypal-settings.js';
export {
  PayPalPayouts,
  PAYPAL_BASE_URLS,
  PAYPAL_MAX_ITEMS,
  PAYPAL_TRANSACTION_STATUSES,
  toItemResults,
  type PayPalBatchCreated,
  type PayPalBatchRead,
  type PayPalCredentials,
  type PayPalEnvironment,
  type PayPalItemRead,
  type PayPalItemResult,
  type PayPalPayoutItem,
} from './paypal.js';
export { sepaChannel } from './sepa-channel.js';
export { paypalChannel, paypalReceiver, paypalSenderBatchId } from './paypal-channel.js';
