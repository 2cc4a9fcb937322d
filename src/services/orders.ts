// Orders: conversions from the networks (postback, poll) or entered by hand, and their ledger
// effects. Every change runs in one transaction with the order row locked, so the same network
// transaction arriving twice, or by two routes at once, is counted once.
import { HOOKS, type HookBus } from '../hooks/index.js';
import type { Transaction } from '../db/transaction.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { toInt } from '../db/values.js';
import { ServiceError } from '../errors.js';
import { currencyExponent, formatAmount, parseAmount } from '../money.js';
import { ASCII_ID, checkAdvertiser, checkNetwork, decodeRule, encodeRule, type CashbackRuleService } from './cashback.js';
import type { LedgerService, Within } from './ledger.js';
import { redact, type LogService } from './logs.js';
import { OrderEffects } from './order-effects.js';
import { ORDER_SOURCES, ORDER_STATUSES, OrderReader, type Order, type OrderFilters, type OrderRow, type OrderSource, type OrderStatus } from './order-rows.js';
import type { ReferralService } from './referrals.js';

export { ORDER_SOURCES, ORDER_STATUSES, type Order, type OrderFilters, type OrderSource, type OrderStatus } from './order-rows.js';

/** One report of an order, from any source. Amounts are decimal strings in `currency`. */
export interface RecordInput {
  network: string;
  transaction_id: string;
  source: OrderSource;
  /** Default `pending`. */
  status?: OrderStatus;
  /** The member, when the caller knows it; otherwise matched from `sub_id`. */
  member_id?: number | null;
  /** Digits: a user id. Anything else: a login. No match: the order is kept unmatched. */
  sub_id?: string | null;
  advertiser?: string | null;
  merchant_ref?: string | null;
  sale_amount: string | number;
  commission: string | number;
  /** Default: the site currency. */
  currency?: string | null;
  clicked_at?: Date | string | null;
  event_at?: Date | string | null;
  /** The network's record; secret-looking keys are redacted before it is stored. */
  raw?: unknown;
  note?: string | null;
}

/** An administrator's change to one order. */
export interface UpdateInput {
  status?: OrderStatus;
  sale_amount?: string;
  commission?: string;
  currency?: string;
  note?: string;
}

/** What a change did: the order, plus `duplicate` (nothing changed), `changes` and `ignored` parts of the report. */
export interface OrderChange extends Order {
  duplicate: boolean;
  /** `created`, `amounts`, `status`, `member`, `note`. */
  changes: string[];
  /** Parts of a network report not applied: `amounts` (order not pending, or a decline), `status` (back to pending), `member`. */
  ignored: string[];
}

export interface OrderServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  ledger: LedgerService;
  cashback: CashbackRuleService;
  referrals: ReferralService;
  hooks: HookBus;
  /** The site currency (default of an order's currency). */
  currency: string;
  /** `referrals.share_percent`: the referrer's share of the referee's cashback. */
  referralShare: string;
}

/** Which status moves the rules allow. Nothing returns to pending. */
const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['approved', 'declined'],
  approved: ['declined'],
  declined: ['approved'],
};

/** A TEXT column holds 65,535 bytes on MariaDB: the stored record stays below (in UTF-8 bytes, not characters). */
const MAX_RAW_BYTES = 60_000;

/** A log line (and, for some, a hook) to emit once the transaction has committed. */
type LogEvent = { level: 'info' | 'warning' | 'debug'; message: string; context: Record<string, unknown>; hook?: string };
type Amounts = { sale: number; commission: number; currency: string };
type Applied = { row: OrderRow; changes: string[]; ignored: string[]; events: LogEvent[] };

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('svc_invalid_order', message, 400, { field });
}

function checkStatus(status: unknown, field = 'status'): OrderStatus {
  if (typeof status !== 'string' || !(ORDER_STATUSES as readonly string[]).includes(status)) throw invalid(field, `${field} must be one of ${ORDER_STATUSES.join(', ')}.`);
  return status as OrderStatus;
}

function checkDate(value: unknown, field: string): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const d = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw invalid(field, `${field} must be an ISO 8601 date-time.`);
  return d;
}

function optionalText(value: unknown, field: string, max: number): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string.`);
  const text = value.trim();
  if (text.length > max) throw invalid(field, `${field} must be at most ${max} characters.`);
  return text || null;
}

function storeRaw(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  const json = JSON.stringify(redact(raw));
  if (json === undefined) return null;
  return Buffer.byteLength(json, 'utf8') > MAX_RAW_BYTES ? JSON.stringify({ truncated: true, preview: json.slice(0, 1000) }) : json;
}


/** Records orders idempotently, moves them between statuses and applies their ledger effects. */
export class OrderService {
  private readonly reader: OrderReader;
  private readonly effects: OrderEffects;

  constructor(private readonly deps: OrderServiceDeps) {
    this.reader = new OrderReader(deps.db);
    this.effects = new OrderEffects({ db: deps.db, ledger: deps.ledger, referrals: deps.referrals, referralShare: deps.referralShare });
  }

  /**
   * Records one report of an order, keyed by (network, transaction_id). New: stored with its
   * cashback from the effective rule, and its ledger effects applied. Known: the same status again
   * changes nothing (`duplicate`); amounts are corrected while pending; the status moves as the
   * rules allow. Network reports (postback, poll) arrive unordered, so a report that cannot apply
   * (amounts of a settled order, a return to pending) is skipped and listed in `ignored`; a manual
   * report is refused instead (409 svc_order_not_pending, svc_invalid_transition).
   */
  async record(input: RecordInput, actor: string, within?: Within<OrderChange>): Promise<OrderChange> {
    const about = { network: String(input?.network).slice(0, 64), transaction_id: String(input?.transaction_id).slice(0, 191), source: String(input?.source).slice(0, 16), actor };
    try {
      const network = checkNetwork(input.network, 'svc_invalid_order');
      if (typeof input.transaction_id !== 'string' || input.transaction_id.trim().length > 191 || !ASCII_ID.test(input.transaction_id.trim())) {
        throw invalid('transaction_id', 'transaction_id must be 1 to 191 printable ASCII characters without spaces.');
      }
      const transactionId = input.transaction_id.trim();
      if (!(ORDER_SOURCES as readonly string[]).includes(input.source)) throw invalid('source', `source must be one of ${ORDER_SOURCES.join(', ')}.`);
      const source = input.source;
      const status = checkStatus(input.status ?? 'pending');
      const currency = input.currency ?? this.deps.currency;
      currencyExponent(currency);
      const sale = parseAmount(input.sale_amount, currency, { allowZero: true, field: 'sale_amount' });
      // A decline may come with the commission zeroed; anything else must carry one.
      const commission = parseAmount(input.commission, currency, { allowZero: status === 'declined', field: 'commission' });
      const advertiser = checkAdvertiser(input.advertiser, 'svc_invalid_order');
      const merchantRef = optionalText(input.merchant_ref, 'merchant_ref', 191);
      const subId = optionalText(input.sub_id, 'sub_id', 191);
      const note = optionalText(input.note, 'note', 500);
      const clickedAt = checkDate(input.clicked_at, 'clicked_at');
      const eventAt = checkDate(input.event_at, 'event_at');
      const raw = storeRaw(input.raw);
      const memberId = await this.resolveMember(input.member_id, subId);
      const rule = await this.deps.cashback.resolve(network, advertiser);
      const amounts: Amounts = { sale, commission, currency };
      const strict = source === 'manual';

      const { result, events } = await this.retryOnDuplicateKey(() =>
        this.deps.db.transaction(async (t) => {
          const existing = await this.reader.lockByTransaction(network, transactionId, t);
          let applied: Applied;
          if (!existing) {
            const cashback = this.deps.cashback.compute(rule, amounts);
            const now = this.deps.clock.now();
            const { insertId } = await this.deps.db.execute(
              `INSERT INTO orders (network, transaction_id, merchant_ref, advertiser, member_id, sub_id, sale_amount, commission, currency, cashback, cashback_rule, status, source, clicked_at, event_at, status_changed_at, raw, note, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
              [network, transactionId, merchantRef, advertiser, memberId, subId, sale, commission, currency, cashback, encodeRule(rule), status, source, clickedAt, eventAt, now, raw, note, now, now],
              t,
            );
            const row = (await this.reader.lockById(insertId!, t))!;
            const effects = await this.effects.enter(row, actor, note, t);
            applied = {
              row,
              changes: ['created'],
              ignored: [],
              events: [{ level: 'info', message: 'Order recorded', hook: HOOKS.orderRecorded, context: { order_id: row.id, ...about, status, member_id: memberId, sub_id: subId, cashback: formatAmount(cashback, currency), currency, rule: encodeRule(rule), ...effects } }],
            };
          } else {
            const ignored: string[] = [];
            let target: Amounts | undefined = amounts;
            // A decline often comes with the amounts zeroed: they never overwrite the order's.
            if (status === 'declined' && this.amountsDiffer(existing, amounts)) (ignored.push('amounts'), (target = undefined));
            if (memberId !== null && memberId !== existing.member_id) ignored.push('member');
            applied = await this.apply(existing, { amounts: target, status }, strict ? 'strict' : 'lenient', actor, null, t);
            applied.ignored.unshift(...ignored);
            if (applied.changes.length > 0 && raw !== null) await this.deps.db.execute('UPDATE orders SET raw = ? WHERE id = ?', [raw, existing.id], t);
            if (applied.ignored.length > 0) applied.events.push({ level: 'warning', message: 'Order report partly ignored', context: { order_id: existing.id, ...about, ignored: applied.ignored, order_status: applied.row.status, reported_status: status } });
            if (applied.changes.length === 0) applied.events.push({ level: 'debug', message: 'Order unchanged (duplicate report)', context: { order_id: existing.id, ...about, status } });
          }
          const result = await this.result(applied, t);
          await within?.(result, t);
          return { result, events: applied.events };
        }),
      );
      this.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('orders', 'Order report refused', { code: err.code, ...about, field: err.data.field });
      throw err;
    }
  }

  /**
   * An administrator's change: a status move the rules allow (409 svc_invalid_transition
   * otherwise), amounts while pending (409 svc_order_not_pending after), and the note.
   */
  async update(id: number, input: UpdateInput, actor: string, within?: Within<OrderChange>): Promise<OrderChange> {
    try {
      const status = input.status === undefined ? undefined : checkStatus(input.status);
      const note = optionalText(input.note, 'note', 500);
      const { result, events } = await this.deps.db.transaction(async (t) => {
        const row = await this.reader.lockById(id, t);
        if (!row) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
        let amounts: Amounts | undefined;
        if (input.sale_amount !== undefined || input.commission !== undefined || input.currency !== undefined) {
          const currency = input.currency ?? row.currency;
          currencyExponent(currency);
          if (currency !== row.currency && (input.sale_amount === undefined || input.commission === undefined)) {
            throw invalid('currency', 'A change of currency needs both sale_amount and commission in the new currency.');
          }
          amounts = {
            currency,
            sale: input.sale_amount === undefined ? row.sale_amount : parseAmount(input.sale_amount, currency, { allowZero: true, field: 'sale_amount' }),
            commission: input.commission === undefined ? row.commission : parseAmount(input.commission, currency, { field: 'commission' }),
          };
        }
        const applied = await this.apply(row, { amounts, status }, 'strict', actor, note, t);
        if (note !== null && note !== row.note) {
          await this.deps.db.execute('UPDATE orders SET note = ?, updated_at = ? WHERE id = ?', [note, this.deps.clock.now(), id], t);
          applied.changes.push('note');
        }
        if (applied.changes.length === 0) applied.events.push({ level: 'debug', message: 'Order unchanged', context: { order_id: id, actor } });
        const result = await this.result(applied, t);
        await within?.(result, t);
        return { result, events: applied.events };
      });
      this.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('orders', 'Order change refused', { code: err.code, order_id: id, status: input?.status === undefined ? undefined : String(input.status).slice(0, 16), actor });
      throw err;
    }
  }

  /**
   * Gives an unmatched order its member and applies the ledger effects of its current status.
   * 409 svc_order_already_assigned when it has another member; the same member again is a duplicate.
   */
  async assign(id: number, memberId: number, actor: string, within?: Within<OrderChange>, note?: string | null): Promise<OrderChange> {
    try {
      const text = optionalText(note, 'note', 500);
      const { result, events } = await this.deps.db.transaction(async (t) => {
        const row = await this.reader.lockById(id, t);
        if (!row) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
        const [member] = await this.deps.db.select('SELECT id FROM users WHERE id = ?', [memberId], t);
        if (!member) throw new ServiceError('svc_member_not_found', `Member ${memberId} not found.`, 404, { member_id: memberId });
        let applied: Applied = { row, changes: [], ignored: [], events: [] };
        if (row.member_id === memberId) {
          applied.events.push({ level: 'debug', message: 'Order already assigned to this member', context: { order_id: id, member_id: memberId, actor } });
        } else if (row.member_id !== null) {
          throw new ServiceError('svc_order_already_assigned', `Order ${id} already belongs to member ${row.member_id}.`, 409, { member_id: row.member_id });
        } else {
          const now = this.deps.clock.now();
          await this.deps.db.execute('UPDATE orders SET member_id = ?, updated_at = ? WHERE id = ?', [memberId, now, id], t);
          const assigned = { ...row, member_id: memberId, updated_at: now };
          const effects = await this.effects.enter(assigned, actor, text ?? 'assigned by an administrator', t);
          applied = { row: assigned, changes: ['member'], ignored: [], events: [{ level: 'info', message: 'Order assigned', hook: HOOKS.orderAssigned, context: { order_id: id, member_id: memberId, status: row.status, actor, ...effects } }] };
        }
        const result = await this.result(applied, t);
        await within?.(result, t);
        return { result, events: applied.events };
      });
      this.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('orders', 'Order assignment refused', { code: err.code, order_id: id, member_id: memberId, actor });
      throw err;
    }
  }

  async get(id: number): Promise<Order> {
    const [order] = await this.reader.byIds([id], { raw: true });
    if (!order) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
    return order;
  }

  list(filters: OrderFilters): Promise<{ items: Order[]; total: number }> {
    if (filters.network !== undefined) checkNetwork(filters.network, 'svc_invalid_order');
    if (filters.advertiser !== undefined) checkAdvertiser(filters.advertiser, 'svc_invalid_order');
    if (filters.status !== undefined) checkStatus(filters.status);
    return this.reader.list(filters);
  }

  /** member_id when given (404 when unknown); else the sub id: digits are a user id, anything else a login. */
  private async resolveMember(memberId: unknown, subId: string | null): Promise<number | null> {
    if (memberId !== undefined && memberId !== null) {
      if (typeof memberId !== 'number' || !Number.isSafeInteger(memberId) || memberId < 1) throw invalid('member_id', 'member_id must be a member id.');
      const [row] = await this.deps.db.select('SELECT id FROM users WHERE id = ?', [memberId]);
      if (!row) throw new ServiceError('svc_member_not_found', `Member ${memberId} not found.`, 404, { member_id: memberId });
      return memberId;
    }
    if (!subId) return null;
    const [row] = /^\d{1,15}$/.test(subId)
      ? await this.deps.db.select<{ id: unknown }>('SELECT id FROM users WHERE id = ?', [Number(subId)])
      : await this.deps.db.select<{ id: unknown }>('SELECT id FROM users WHERE login = ?', [subId]);
    return row ? toInt(row.id) : null;
  }

  /** Two reports of a new transaction racing: the loser's INSERT hits the unique key; run it again. */
  private async retryOnDuplicateKey<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= 3 || !isUniqueViolation(err)) throw err;
      }
    }
  }

  private amountsDiffer(row: OrderRow, a: Amounts): boolean {
    return row.sale_amount !== a.sale || row.commission !== a.commission || row.currency !== a.currency;
  }

  /**
   * Applies amounts and a status to a locked order. `strict` refuses what the rules forbid;
   * `lenient` (network reports) skips it and says so in `ignored`.
   */
  private async apply(row: OrderRow, target: { amounts?: Amounts; status?: OrderStatus }, mode: 'strict' | 'lenient', actor: string, note: string | null, t: Transaction): Promise<Applied> {
    const out: Applied = { row, changes: [], ignored: [], events: [] };
    const now = this.deps.clock.now();
    if (target.amounts && this.amountsDiffer(row, target.amounts)) {
      if (row.status !== 'pending') {
        if (mode === 'strict') throw new ServiceError('svc_order_not_pending', `Order ${row.id} is ${row.status}: amounts can only be corrected while it is pending.`, 409, { status: row.status });
        out.ignored.push('amounts');
      } else {
        const a = target.amounts;
        const rule = decodeRule(row.cashback_rule) ?? (await this.deps.cashback.resolve(row.network, row.advertiser, t));
        const cashback = this.deps.cashback.compute(rule, a);
        await this.effects.reprice(row, a.currency, cashback, t);
        await this.deps.db.execute('UPDATE orders SET sale_amount = ?, commission = ?, currency = ?, cashback = ?, updated_at = ? WHERE id = ?', [a.sale, a.commission, a.currency, cashback, now, row.id], t);
        out.events.push({
          level: 'info',
          message: 'Order amounts corrected',
          context: {
            order_id: row.id,
            from: { sale_amount: formatAmount(row.sale_amount, row.currency), commission: formatAmount(row.commission, row.currency), cashback: formatAmount(row.cashback, row.currency), currency: row.currency },
            to: { sale_amount: formatAmount(a.sale, a.currency), commission: formatAmount(a.commission, a.currency), cashback: formatAmount(cashback, a.currency), currency: a.currency },
            actor,
          },
        });
        out.row = { ...row, sale_amount: a.sale, commission: a.commission, currency: a.currency, cashback, updated_at: now };
        out.changes.push('amounts');
      }
    }
    const to = target.status;
    if (to !== undefined && to !== out.row.status) {
      const from = out.row.status;
      if (!TRANSITIONS[from].includes(to)) {
        if (mode === 'strict') throw new ServiceError('svc_invalid_transition', `Order ${row.id} cannot move from ${from} to ${to}.`, 409, { from, to, allowed: TRANSITIONS[from] });
        out.ignored.push('status');
      } else {
        const current = out.row;
        const effects = await this.effects.move(current, from, to, actor, note, t);
        await this.deps.db.execute('UPDATE orders SET status = ?, status_changed_at = ?, updated_at = ? WHERE id = ?', [to, now, now, row.id], t);
        out.row = { ...current, status: to, status_changed_at: now, updated_at: now };
        out.changes.push('status');
        out.events.push({ level: 'info', message: 'Order status changed', hook: HOOKS.orderStatusChanged, context: { order_id: row.id, network: row.network, transaction_id: row.transaction_id, from, to, member_id: current.member_id, actor, ...effects } });
      }
    }
    return out;
  }

  private async result(applied: Applied, t: Transaction): Promise<OrderChange> {
    const [order] = await this.reader.byIds([applied.row.id], { raw: true, t });
    return { ...order, duplicate: applied.changes.length === 0, changes: applied.changes, ignored: applied.ignored };
  }

  /** Logs once the transaction has committed (a retried transaction logs once). */
  private emit(events: LogEvent[]): void {
    for (const e of events) {
      this.deps.logger[e.level]('orders', e.message, e.context);
      if (e.hook) this.deps.hooks.doAction(e.hook, e.context);
    }
  }
}
