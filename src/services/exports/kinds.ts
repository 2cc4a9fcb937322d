// What each kind of export is: its filters (the kind's list-route schema, without paging and sort),
// the keyset walk through the owning domain's service (id order, one chunk at a time), and the
// columns of its CSV. A JSON Lines file holds each row as the list route shows it.
import Joi from 'joi';
import type { Claim, ClaimService } from '../claims/index.js';
import { claimSchemas } from '../claims/schemas.js';
import type { Click, ClickService } from '../clicks/index.js';
import { clickSchemas } from '../clicks/schemas.js';
import type { Entry, LedgerService, MemberBalance } from '../ledger/index.js';
import { ledgerSchemas } from '../ledger/schemas.js';
import type { Order, OrderService } from '../orders/index.js';
import { orderSchemas } from '../orders/schemas.js';
import type { Payout, PayoutService } from '../payouts/index.js';
import { payoutSchemas } from '../payouts/schemas.js';

export const EXPORT_KINDS = ['orders', 'ledger_entries', 'payouts', 'balances', 'clicks', 'claims'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The services an export reads through (each owns its table). */
export interface ExportSources {
  orders: Pick<OrderService, 'listAfter' | 'list'>;
  ledger: Pick<LedgerService, 'listEntriesAfter' | 'listEntries' | 'listMembersAfter' | 'listMembers'>;
  payouts: Pick<PayoutService, 'listAfter' | 'list'>;
  clicks: Pick<ClickService, 'listAfter' | 'list'>;
  claims: Pick<ClaimService, 'listAfter' | 'list'>;
}

// biome-ignore lint/suspicious/noExplicitAny: each kind's filters are what its own schema let through.
type Filters = Record<string, any>;

export interface KindSpec<T, C> {
  /** The list route's filters without paging and sort: an unknown or bad filter is refused as there. */
  filters(): Joi.ObjectSchema;
  /** The first cursor (before every row). */
  start: C;
  /** The next chunk after `cursor`, in key order. */
  next(sources: ExportSources, filters: Filters, cursor: C, limit: number): Promise<T[]>;
  /** The cursor after `item`. */
  cursor(item: T): C;
  /** How many rows the export will hold, when the list can say (null: unknown, the progress shows a count only). */
  total(sources: ExportSources, filters: Filters): Promise<number | null>;
  /** The CSV header and one row's cells (amounts as decimal strings beside a currency column, times ISO 8601 UTC). */
  columns: readonly string[];
  cells(item: T): unknown[];
}

/**
 * The list schema without paging and sort: those are not filters, and an export walks in key order.
 * Made on first use: forking the six schemas took some 10 ms of every command's start-up.
 */
function withoutPaging(schema: () => Joi.ObjectSchema, extra: string[] = []): () => Joi.ObjectSchema {
  let forked: Joi.ObjectSchema | undefined;
  return () =>
    (forked ??= schema()
      .fork(['page', 'per_page', 'orderby', 'order'], () => Joi.any().forbidden())
      .fork(extra, (s) => s.optional()));
}

const onePage = { page: 1, per_page: 1 };

const orders: KindSpec<Order, number> = {
  filters: withoutPaging(() => orderSchemas.list),
  start: 0,
  next: (s, f, after, limit) => s.orders.listAfter(f, after, limit),
  cursor: (o) => o.id,
  total: async (s, f) => (await s.orders.list({ ...f, ...onePage })).total,
  columns: [
    'id',
    'network',
    'transaction_id',
    'merchant_ref',
    'advertiser',
    'member_id',
    'member_login',
    'sub_id',
    'click_id',
    'currency',
    'sale_amount',
    'commission',
    'cashback',
    'status',
    'source',
    'review',
    'clicked_at',
    'event_at',
    'status_changed_at',
    'created_at',
    'updated_at',
    'note',
  ],
  cells: (o) => [
    o.id,
    o.network,
    o.transaction_id,
    o.merchant_ref,
    o.advertiser,
    o.member?.id,
    o.member?.login,
    o.sub_id,
    o.click_id,
    o.currency,
    o.sale_amount,
    o.commission,
    o.cashback,
    o.status,
    o.source,
    o.review?.state,
    o.clicked_at,
    o.event_at,
    o.status_changed_at,
    o.created_at,
    o.updated_at,
    o.note,
  ],
};

const ledgerEntries: KindSpec<Entry, number> = {
  // The list route is one member's ledger; an export may also take every member's (member_id optional).
  filters: withoutPaging(() => ledgerSchemas.entries, ['member_id']),
  start: 0,
  next: (s, f, after, limit) => s.ledger.listEntriesAfter(f, after, limit),
  cursor: (e) => e.id,
  total: async (s, f) => (f.member_id === undefined ? null : (await s.ledger.listEntries({ ...f, member_id: f.member_id, ...onePage })).total),
  columns: [
    'id',
    'member_id',
    'type',
    'currency',
    'amount',
    'balance_after',
    'source_type',
    'source_id',
    'order_id',
    'reverses_id',
    'reversed_by',
    'actor',
    'note',
    'created_at',
  ],
  cells: (e) => [
    e.id,
    e.member_id,
    e.type,
    e.currency,
    e.amount,
    e.balance_after,
    e.source.type,
    e.source.id,
    e.order_id,
    e.reverses_id,
    e.reversed_by,
    e.actor,
    e.note,
    e.created_at,
  ],
};

const payouts: KindSpec<Payout, number> = {
  filters: withoutPaging(() => payoutSchemas.list),
  start: 0,
  next: (s, f, after, limit) => s.payouts.listAfter(f, after, limit),
  cursor: (p) => p.id,
  total: async (s, f) => (await s.payouts.list({ ...f, ...onePage })).total,
  columns: [
    'id',
    'member_id',
    'login',
    'display_name',
    'currency',
    'amount',
    'method',
    'details',
    'status',
    'reference',
    'reason',
    'entry_id',
    'return_entry_id',
    'actor',
    'closed_by',
    'note',
    'created_at',
    'closed_at',
  ],
  cells: (p) => [
    p.id,
    p.member_id,
    p.login,
    p.display_name,
    p.currency,
    p.amount,
    p.method,
    p.details,
    p.status,
    p.reference,
    p.reason,
    p.entry_id,
    p.return_entry_id,
    p.actor,
    p.closed_by,
    p.note,
    p.created_at,
    p.closed_at,
  ],
};

type BalanceKey = { member_id: number; currency: string } | null;

const balances: KindSpec<MemberBalance, BalanceKey> = {
  filters: withoutPaging(() => ledgerSchemas.members),
  start: null,
  next: (s, f, after, limit) => s.ledger.listMembersAfter(f, after, limit),
  cursor: (b) => ({ member_id: b.member_id, currency: b.currency }),
  total: async (s, f) => (await s.ledger.listMembers({ ...f, ...onePage })).total,
  columns: ['member_id', 'login', 'display_name', 'email', 'currency', 'available', 'pending', 'lifetime_earned', 'lifetime_paid', 'last_entry_at'],
  cells: (b) => [b.member_id, b.login, b.display_name, b.email, b.currency, b.available, b.pending, b.lifetime_earned, b.lifetime_paid, b.last_entry_at],
};

const clicks: KindSpec<Click, string> = {
  filters: withoutPaging(() => clickSchemas.list),
  start: '',
  next: (s, f, after, limit) => s.clicks.listAfter(f, after, limit),
  cursor: (c) => c.id,
  total: async (s, f) => (await s.clicks.list({ ...f, ...onePage })).total,
  columns: ['id', 'member_id', 'member_login', 'network', 'advertiser', 'advertiser_name', 'coupon_id', 'url', 'ip_prefix', 'ua_hash', 'created_at'],
  cells: (c) => [c.id, c.member?.id, c.member?.login, c.network, c.advertiser, c.advertiser_name, c.coupon_id, c.url, c.ip_prefix, c.ua_hash, c.created_at],
};

const claims: KindSpec<Claim, number> = {
  filters: withoutPaging(() => claimSchemas.list),
  start: 0,
  next: (s, f, after, limit) => s.claims.listAfter(f, after, limit),
  cursor: (c) => c.id,
  total: async (s, f) => (await s.claims.list({ ...f, ...onePage })).total,
  columns: [
    'id',
    'member_id',
    'member_login',
    'network',
    'advertiser',
    'order_ref',
    'purchased_at',
    'currency',
    'amount',
    'status',
    'reason',
    'order_id',
    'click_id',
    'channel',
    'network_ref',
    'network_status',
    'deadline_at',
    'submitted_at',
    'resolved_at',
    'actor',
    'note',
    'created_at',
    'updated_at',
  ],
  cells: (c) => [
    c.id,
    c.member.id,
    c.member.login,
    c.network,
    c.advertiser,
    c.order_ref,
    c.purchased_at,
    c.currency,
    c.amount,
    c.status,
    c.reason,
    c.order_id,
    c.click_id,
    c.channel,
    c.network_ref,
    c.network_status,
    c.deadline_at,
    c.submitted_at,
    c.resolved_at,
    c.actor,
    c.note,
    c.created_at,
    c.updated_at,
  ],
};

// biome-ignore lint/suspicious/noExplicitAny: the table mixes item and cursor types; each entry is checked where it is written.
export const KINDS: Record<ExportKind, KindSpec<any, any>> = { orders, ledger_entries: ledgerEntries, payouts, balances, clicks, claims };
