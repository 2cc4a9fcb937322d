// A report of an order (postback, poll, by hand) checked and normalised before anything is
// written: the same checks for one report and for a batch, so a bad report is refused on its own
// and never takes a batch down with it.
import { ServiceError } from '../../errors.js';
import { currencyExponent, parseAmount } from '../../money.js';
import { ASCII_ID, checkAdvertiser, checkNetwork } from '../cashback/index.js';
import { redact } from '../logs/index.js';
import { isClickId, type ClickRow } from '../clicks/index.js';
import type { UserService } from '../users/index.js';
import { ORDER_SOURCES, ORDER_STATUSES, type OrderSource, type OrderStatus } from './states.js';

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
  /**
   * The network's member fallback field beside a click id (Awin clickRef2, Admitad subid1,
   * impact.com SubId2): a member id, read only when `sub_id` is a click id not on file.
   */
  member_ref?: string | null;
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

/** Amounts in minor units of `currency`. */
export type Amounts = { sale: number; commission: number; currency: string };

/** A report that passed every check (see `prepareReport`). */
export interface OrderReport {
  readonly prepared: true;
  network: string;
  transactionId: string;
  source: OrderSource;
  status: OrderStatus;
  amounts: Amounts;
  /** The member given explicitly (its existence is checked when recording), else null. */
  memberId: number | null;
  subId: string | null;
  /** The member fallback field when it is a member id (digits), else null. */
  memberRef: number | null;
  advertiser: string | null;
  merchantRef: string | null;
  note: string | null;
  clickedAt: Date | null;
  eventAt: Date | null;
  /** The network's record as stored (redacted JSON), or null. */
  raw: string | null;
  /** What identifies the report in the log. */
  about: { network: string; transaction_id: string; source: string; actor: string };
}

/** A TEXT column holds 65,535 bytes on MariaDB: the stored record stays below (in UTF-8 bytes, not characters). */
const MAX_RAW_BYTES = 60_000;

export function invalid(field: string, message: string): ServiceError {
  return new ServiceError('svc_invalid_order', message, 400, { field });
}

export function checkStatus(status: unknown, field = 'status'): OrderStatus {
  if (typeof status !== 'string' || !(ORDER_STATUSES as readonly string[]).includes(status))
    throw invalid(field, `${field} must be one of ${ORDER_STATUSES.join(', ')}.`);
  return status as OrderStatus;
}

function checkDate(value: unknown, field: string): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const d = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw invalid(field, `${field} must be an ISO 8601 date-time.`);
  return d;
}

export function optionalText(value: unknown, field: string, max: number): string | null {
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

/** What identifies a report in the log, whatever it holds. */
export function aboutReport(input: RecordInput, actor: string): OrderReport['about'] {
  return {
    network: String(input?.network).slice(0, 64),
    transaction_id: String(input?.transaction_id).slice(0, 191),
    source: String(input?.source).slice(0, 16),
    actor,
  };
}

/** Checks and normalises a report (400 svc_invalid_order, svc_invalid_amount, svc_invalid_currency). */
export function prepareReport(input: RecordInput, actor: string, siteCurrency: string): OrderReport {
  const about = aboutReport(input, actor);
  const network = checkNetwork(input.network, 'svc_invalid_order');
  if (typeof input.transaction_id !== 'string' || input.transaction_id.trim().length > 191 || !ASCII_ID.test(input.transaction_id.trim())) {
    throw invalid('transaction_id', 'transaction_id must be 1 to 191 printable ASCII characters without spaces.');
  }
  const transactionId = input.transaction_id.trim();
  if (!(ORDER_SOURCES as readonly string[]).includes(input.source)) throw invalid('source', `source must be one of ${ORDER_SOURCES.join(', ')}.`);
  const status = checkStatus(input.status ?? 'pending');
  const currency = input.currency ?? siteCurrency;
  currencyExponent(currency);
  const sale = parseAmount(input.sale_amount, currency, { allowZero: true, field: 'sale_amount' });
  // A decline may come with the commission zeroed; anything else must carry one.
  const commission = parseAmount(input.commission, currency, { allowZero: status === 'declined', field: 'commission' });
  const memberId = input.member_id;
  if (memberId !== undefined && memberId !== null && (typeof memberId !== 'number' || !Number.isSafeInteger(memberId) || memberId < 1))
    throw invalid('member_id', 'member_id must be a member id.');
  return {
    prepared: true,
    network,
    transactionId,
    source: input.source,
    status,
    amounts: { sale, commission, currency },
    memberId: memberId ?? null,
    advertiser: checkAdvertiser(input.advertiser, 'svc_invalid_order'),
    merchantRef: optionalText(input.merchant_ref, 'merchant_ref', 191),
    subId: optionalText(input.sub_id, 'sub_id', 191),
    memberRef: typeof input.member_ref === 'string' && /^\d{1,15}$/.test(input.member_ref.trim()) ? Number(input.member_ref.trim()) : null,
    note: optionalText(input.note, 'note', 500),
    clickedAt: checkDate(input.clicked_at, 'clicked_at'),
    eventAt: checkDate(input.event_at, 'event_at'),
    raw: storeRaw(input.raw),
    about,
  };
}

/**
 * Each report's member: `member_id` when given (404 when unknown); else the click its sub id names
 * (`clicks[i]`, the click's member); else, when the sub id is a click id that is not on file
 * (pruned, or made by another site's link), the member id in the network's fallback field
 * (`memberRef`) when that member exists; else the sub id: digits are a user id, anything else a
 * login; no match, null. One query for all the ids. The one place an order's member is resolved.
 */
/** A report whose sub id is a click id we do not hold (the caller found no click), with a member id in the fallback field. */
function fallsBack(r: OrderReport): boolean {
  return r.subId !== null && isClickId(r.subId) && r.memberRef !== null;
}

export async function membersOf(
  users: Pick<UserService, 'existingIds' | 'idByLogin'>,
  reports: OrderReport[],
  clicks: (ClickRow | null)[] = [],
): Promise<(number | null)[]> {
  const ids = new Set<number>();
  for (const [i, r] of reports.entries()) {
    if (r.memberId === null && clicks[i]) continue;
    if (r.memberId !== null) ids.add(r.memberId);
    else if (fallsBack(r)) ids.add(r.memberRef!);
    else if (r.subId && /^\d{1,15}$/.test(r.subId)) ids.add(Number(r.subId));
  }
  const known = await users.existingIds([...ids]);
  // Logins compare as the database's collation does (case-insensitively): one lookup each.
  const logins = new Map<string, Promise<number | null>>();
  const byLogin = (login: string) => {
    if (!logins.has(login)) logins.set(login, users.idByLogin(login));
    return logins.get(login)!;
  };
  return Promise.all(
    reports.map(async (r, i) => {
      // A sub id that is a click id of this network: the click's member.
      if (r.memberId === null && clicks[i]) return clicks[i]!.member_id;
      if (r.memberId !== null) {
        if (!known.has(r.memberId)) throw new ServiceError('svc_member_not_found', `Member ${r.memberId} not found.`, 404, { member_id: r.memberId });
        return r.memberId;
      }
      if (!r.subId) return null;
      // An unknown click id: the member the fallback field names, when there is one (no click).
      if (fallsBack(r)) return known.has(r.memberRef!) ? r.memberRef : null;
      if (/^\d{1,15}$/.test(r.subId)) return known.has(Number(r.subId)) ? Number(r.subId) : null;
      return byLogin(r.subId);
    }),
  );
}
