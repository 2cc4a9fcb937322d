// The PayPal Payouts REST client (https://developer.paypal.com/docs/api/payments.payouts-batch/v1/):
// an OAuth2 client-credentials token (POST /v1/oauth2/token), a batch created with
// POST /v1/payments/payouts and read back, page by page, with GET /v1/payments/payouts/{id}.
//
// Why a resend never pays twice. PayPal completes a payment once per `sender_batch_id` used within
// 30 days, and says a 5xx may be retried with the same one. So: a create whose answer did not
// arrive (a dropped connection, a timeout, a 5xx) is sent again with the SAME body, hence the same
// sender_batch_id, and the same PayPal-Request-Id (PayPal answers a repeated request id with the
// first request's result). When PayPal answers that the sender_batch_id was already used
// (400 USER_BUSINESS_ERROR, detail field SENDER_BATCH_ID), the batch was sent before: PayPal's
// answer carries a HATEOAS link to the original batch, which gives its payout_batch_id, and the
// batch is then read like any other (`duplicate: true`). The API documents no search by
// sender_batch_id, so that link is the only road back to a batch whose create answer was lost;
// callers should still store payout_batch_id as soon as they have it.
//
// Every request goes through the outbound guard (the base URL is a setting); the client secret
// and every access token are added to the process's secret values, so no log line or stored error
// can carry them.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { isServiceError, ServiceError } from '../../errors.js';
import type { OutboundGuard, OutboundResponse } from '../../outbound/index.js';
import type { SecretValues } from '../../secret-values.js';

export const PAYPAL_BASE_URLS = { sandbox: 'https://api-m.sandbox.paypal.com', live: 'https://api-m.paypal.com' } as const;
export type PayPalEnvironment = keyof typeof PAYPAL_BASE_URLS;

/** PayPal's limit on the items of one create call (more is a 400). */
export const PAYPAL_MAX_ITEMS = 15_000;

export const PAYPAL_TRANSACTION_STATUSES = [
  'SUCCESS',
  'FAILED',
  'PENDING',
  'UNCLAIMED',
  'RETURNED',
  'ONHOLD',
  'BLOCKED',
  'REFUNDED',
  'REVERSED',
  'DENIED',
] as const;
export type PayPalTransactionStatus = (typeof PAYPAL_TRANSACTION_STATUSES)[number];

export interface PayPalCredentials {
  client_id: string;
  client_secret: string;
  /** The API's origin: PAYPAL_BASE_URLS[environment], or an override (tests). */
  base_url: string;
}

export interface PayPalPayoutItem {
  /** Our reference for the item (the payout's id): comes back on every item read. At most 63 characters. */
  sender_item_id: string;
  /** The member's PayPal e-mail address (recipient_type EMAIL). */
  receiver: string;
  amount: { value: string; currency: string };
  note?: string;
}

export interface PayPalBatchCreated {
  payout_batch_id: string;
  batch_status: string;
  /** The sender_batch_id had been used before: this is the batch that earlier send created. */
  duplicate: boolean;
}

export interface PayPalItemRead {
  sender_item_id: string;
  payout_item_id: string;
  transaction_id: string | null;
  transaction_status: string;
  error?: { name: string; message: string };
}

export interface PayPalBatchRead {
  payout_batch_id: string;
  batch_status: string;
  items: PayPalItemRead[];
}

export interface PayPalItemResult {
  item_ref: string;
  outcome: 'paid' | 'failed' | 'pending';
  /** The PayPal transaction id (paid), else the payout item id when PayPal gave one. */
  reference: string | null;
  /** Why it failed or is still pending ("NAME: message"); null when paid. */
  reason: string | null;
}

export interface PayPalRetry {
  /** Attempts in all for one call, the first included. */
  attempts: number;
  /** First wait between attempts; doubles each time. */
  baseDelayMs: number;
}

export interface PayPalPayoutsDeps {
  guard: Pick<OutboundGuard, 'fetch'>;
  clock: Clock;
  credentials: PayPalCredentials;
  secrets?: SecretValues;
  /** Per request (connect, headers and body). Default 30 s. */
  timeoutMs?: number;
  retry?: Partial<PayPalRetry>;
  /** Items asked for per page when reading a batch (PayPal allows 1..1000). Default 1000. */
  pageSize?: number;
  /** Waits between attempts (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
}

/** A token is renewed this long before PayPal says it expires, so none expires in flight. */
const TOKEN_MARGIN_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY: PayPalRetry = { attempts: 4, baseDelayMs: 1_000 };
const MAX_BODY = 32 * 1024 * 1024;
const DUPLICATE_FIELD = 'SENDER_BATCH_ID';

type Json = Record<string, unknown>;

interface Answer {
  status: number;
  body: Json | null;
  text: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** 503 svc_paypal_not_configured naming what is missing. */
export function paypalNotConfigured(missing: string[]): ServiceError {
  return new ServiceError(
    'svc_paypal_not_configured',
    `PayPal Payouts is not configured: set ${missing.join(', ')} (cashtrack payouts paypal-settings, or POST /payouts/paypal/settings).`,
    503,
    { missing },
  );
}

/** PayPal's error answer in a sentence: "NAME: message (issue; issue) [debug_id X]". */
function describeError(answer: Answer): { name: string | null; text: string; debugId: string | null } {
  const b = answer.body;
  if (!b) return { name: null, text: `HTTP ${answer.status}`, debugId: null };
  // The token endpoint answers OAuth2's shape ({error, error_description}); the API its own.
  const name = str(b.name) ?? str(b.error);
  const message = str(b.message) ?? str(b.error_description);
  const issues = Array.isArray(b.details)
    ? b.details
        .filter(isObject)
        .map((d) => [str(d.field), str(d.issue) ?? str(d.description)].filter(Boolean).join(': '))
        .filter(Boolean)
    : [];
  const debugId = str(b.debug_id);
  const text = `${[name, message].filter(Boolean).join(': ') || `HTTP ${answer.status}`}${issues.length ? ` (${issues.slice(0, 5).join('; ')})` : ''}`;
  return { name, text, debugId };
}

/** The payout_batch_id from the HATEOAS link PayPal adds to its duplicate sender_batch_id answer. */
export function duplicateBatchId(body: Json | null): string | null {
  if (body?.name !== 'USER_BUSINESS_ERROR' || !Array.isArray(body.details)) return null;
  const detail = body.details.find((d) => isObject(d) && String(d.field).toUpperCase() === DUPLICATE_FIELD);
  if (!isObject(detail)) return null;
  const links = [...(Array.isArray(detail.link) ? detail.link : []), ...(Array.isArray(body.links) ? body.links : [])];
  for (const link of links) {
    const href = isObject(link) ? str(link.href) : null;
    const id = href ? /\/v1\/payments\/payouts\/([^/?#]+)/.exec(href)?.[1] : undefined;
    if (id) return decodeURIComponent(id);
  }
  return '';
}

/** Whether an answer is PayPal's "this sender_batch_id was already used" (with or without its link). */
export function isDuplicateSenderBatch(body: Json | null): boolean {
  return duplicateBatchId(body) !== null;
}

/**
 * PayPal item statuses as outcomes. SUCCESS is paid. FAILED, RETURNED, BLOCKED, REFUNDED, REVERSED
 * and DENIED are failed: the money did not reach the member or came back to us. PENDING and ONHOLD
 * are pending. UNCLAIMED is pending too: the receiver has no PayPal account yet, PayPal holds the
 * money for 30 days and either delivers it when claimed (then SUCCESS) or returns it (then
 * RETURNED, failed). Returning the amount to the member at UNCLAIMED could pay them twice.
 */
export function toItemResults(items: readonly PayPalItemRead[]): PayPalItemResult[] {
  return items.map((item) => {
    const status = item.transaction_status.toUpperCase();
    const why = item.error ? `${item.error.name}: ${item.error.message}` : null;
    if (status === 'SUCCESS') return { item_ref: item.sender_item_id, outcome: 'paid', reference: item.transaction_id ?? item.payout_item_id, reason: null };
    if (['FAILED', 'RETURNED', 'BLOCKED', 'REFUNDED', 'REVERSED', 'DENIED'].includes(status))
      return {
        item_ref: item.sender_item_id,
        outcome: 'failed',
        reference: item.payout_item_id || null,
        reason: why ?? `PayPal reports the payment ${status}.`,
      };
    // PENDING, ONHOLD, UNCLAIMED, and a status PayPal may add later: not final, read again.
    return {
      item_ref: item.sender_item_id,
      outcome: 'pending',
      reference: item.payout_item_id || null,
      reason: status === 'UNCLAIMED' ? `UNCLAIMED: ${item.error?.message ?? 'the receiver has not claimed the payment yet'}` : (why ?? status),
    };
  });
}

/** One PayPal account's Payouts API, with its access token kept until shortly before it expires. */
export class PayPalPayouts {
  private readonly retry: PayPalRetry;
  private readonly timeoutMs: number;
  private readonly pageSize: number;
  private readonly base: string;
  private readonly sleep: (ms: number) => Promise<void>;
  private token: { value: string; expiresAt: number } | null = null;
  /** One token request at a time: concurrent calls share it. */
  private pendingToken: Promise<string> | null = null;

  constructor(private readonly deps: PayPalPayoutsDeps) {
    this.retry = { ...DEFAULT_RETRY, ...deps.retry };
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.pageSize = Math.min(1000, Math.max(1, deps.pageSize ?? 1000));
    this.base = deps.credentials.base_url.replace(/\/+$/, '');
    this.sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    deps.secrets?.add(deps.credentials.client_secret);
  }

  /**
   * Sends a batch. Retries an unanswered send with the same sender_batch_id and PayPal-Request-Id;
   * PayPal's "sender_batch_id already used" answer is taken as sent before (`duplicate: true`),
   * with that batch's id and current status.
   */
  async createBatch(
    senderBatchId: string,
    items: readonly PayPalPayoutItem[],
    options: { emailSubject?: string; emailMessage?: string; requestId?: string } = {},
  ): Promise<PayPalBatchCreated> {
    checkBatch(senderBatchId, items);
    const body = JSON.stringify({
      sender_batch_header: {
        sender_batch_id: senderBatchId,
        recipient_type: 'EMAIL',
        email_subject: options.emailSubject ?? 'You have a payout',
        ...(options.emailMessage ? { email_message: options.emailMessage } : {}),
      },
      items: items.map((i) => ({
        recipient_type: 'EMAIL',
        amount: { value: i.amount.value, currency: i.amount.currency },
        receiver: i.receiver,
        sender_item_id: i.sender_item_id,
        ...(i.note ? { note: i.note } : {}),
      })),
    });
    const requestId = options.requestId ?? `cashtrack-${randomUUID()}`;
    const answer = await this.call('POST', '/v1/payments/payouts', { body, headers: { 'PayPal-Request-Id': requestId } });
    if (answer.status === 201 || answer.status === 200) {
      const header = isObject(answer.body) && isObject(answer.body.batch_header) ? answer.body.batch_header : null;
      const id = header ? str(header.payout_batch_id) : null;
      if (!header || !id) throw badResponse('the created batch has no batch_header.payout_batch_id');
      return { payout_batch_id: id, batch_status: str(header.batch_status) ?? 'PENDING', duplicate: false };
    }
    const existing = duplicateBatchId(answer.body);
    if (existing !== null) {
      if (existing === '')
        throw new ServiceError(
          'svc_paypal_duplicate_batch',
          `PayPal says the sender_batch_id ${senderBatchId} was already used but does not link the batch: find it in the PayPal account's activity before sending again.`,
          409,
          { sender_batch_id: senderBatchId },
        );
      const first = await this.readPage(existing, 1, 1);
      return { payout_batch_id: existing, batch_status: first.batch_status, duplicate: true };
    }
    throw rejected(answer, 'create the payout batch');
  }

  /** The batch's status and every item (all pages). 404 svc_paypal_batch_not_found for an unknown id. */
  async readBatch(payoutBatchId: string): Promise<PayPalBatchRead> {
    if (!payoutBatchId || payoutBatchId.length > 1000) throw new ServiceError('svc_paypal_rejected', 'A payout_batch_id is 1 to 1000 characters.', 400);
    const items: PayPalItemRead[] = [];
    let status = 'PENDING';
    for (let page = 1; ; page++) {
      const read = await this.readPage(payoutBatchId, page, this.pageSize);
      status = read.batch_status;
      items.push(...read.items);
      // total_pages when PayPal gives it; else a short page is the last.
      const done = read.totalPages !== null ? page >= read.totalPages : read.items.length < this.pageSize;
      if (done || read.items.length === 0) break;
      if (page >= 1000) throw badResponse('a batch with more than 1000 pages');
    }
    return { payout_batch_id: payoutBatchId, batch_status: status, items };
  }

  private async readPage(id: string, page: number, pageSize: number): Promise<{ batch_status: string; items: PayPalItemRead[]; totalPages: number | null }> {
    const path = `/v1/payments/payouts/${encodeURIComponent(id)}?page=${page}&page_size=${pageSize}&total_required=true`;
    const answer = await this.call('GET', path);
    if (answer.status === 404)
      throw new ServiceError('svc_paypal_batch_not_found', `PayPal has no payout batch ${id.slice(0, 64)}.`, 404, { payout_batch_id: id.slice(0, 64) });
    if (answer.status !== 200) throw rejected(answer, `read the payout batch ${id.slice(0, 64)}`);
    const b = answer.body;
    const header = b && isObject(b.batch_header) ? b.batch_header : null;
    if (!b || !header) throw badResponse('the batch has no batch_header');
    const raw = Array.isArray(b.items) ? b.items : [];
    const items = raw.map((it): PayPalItemRead => {
      if (!isObject(it)) throw badResponse('a batch item is not an object');
      const detail = isObject(it.payout_item) ? it.payout_item : {};
      const errors = isObject(it.errors) ? it.errors : null;
      const senderItemId = str(detail.sender_item_id);
      const payoutItemId = str(it.payout_item_id);
      if (!senderItemId || !payoutItemId) throw badResponse('a batch item has no payout_item.sender_item_id or payout_item_id');
      return {
        sender_item_id: senderItemId,
        payout_item_id: payoutItemId,
        transaction_id: str(it.transaction_id),
        transaction_status: str(it.transaction_status) ?? 'PENDING',
        ...(errors ? { error: { name: str(errors.name) ?? 'ERROR', message: str(errors.message) ?? '' } } : {}),
      };
    });
    const totalPages = typeof b.total_pages === 'number' ? b.total_pages : null;
    return { batch_status: str(header.batch_status) ?? 'PENDING', items, totalPages };
  }

  /**
   * One API call with a valid token: a 401 drops the token and tries once more with a new one;
   * no answer, a 429 or a 5xx is sent again, identical, up to the retry policy.
   */
  private async call(method: 'GET' | 'POST', path: string, extra: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      let answer: Answer;
      try {
        answer = await this.send(method, path, {
          ...extra.headers,
          Authorization: `Bearer ${token}`,
          ...(extra.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          body: extra.body,
        });
      } catch (err) {
        if (!isTransient(err) || attempt >= this.retry.attempts) throw unavailable(err, method, path, attempt);
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (answer.status === 401 && !renewed) {
        // The token expired early or was revoked: one new token, one more try (not counted as an attempt).
        renewed = true;
        this.token = null;
        attempt--;
        continue;
      }
      if (answer.status === 401) throw authFailed(answer);
      if ((answer.status === 429 || answer.status >= 500) && attempt < this.retry.attempts) {
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (answer.status === 429 || answer.status >= 500) throw unavailable(null, method, path, attempt, answer);
      return answer;
    }
  }

  private backoff(attempt: number): number {
    return this.retry.baseDelayMs * 2 ** (attempt - 1);
  }

  /** The cached token, or a new one when there is none or it is about to expire. */
  private accessToken(): Promise<string> {
    if (this.token && this.deps.clock.now().getTime() < this.token.expiresAt - TOKEN_MARGIN_MS) return Promise.resolve(this.token.value);
    this.pendingToken ??= this.fetchToken().finally(() => {
      this.pendingToken = null;
    });
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    const { client_id, client_secret } = this.deps.credentials;
    const basic = Buffer.from(`${client_id}:${client_secret}`, 'utf8').toString('base64');
    this.deps.secrets?.add(basic);
    for (let attempt = 1; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.send('POST', '/v1/oauth2/token', {
          Authorization: `Basic ${basic}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          body: 'grant_type=client_credentials',
        });
      } catch (err) {
        if (!isTransient(err) || attempt >= this.retry.attempts) throw unavailable(err, 'POST', '/v1/oauth2/token', attempt);
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if ((answer.status === 429 || answer.status >= 500) && attempt < this.retry.attempts) {
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (answer.status === 401 || answer.status === 403 || (answer.status === 400 && answer.body?.error === 'invalid_client')) throw authFailed(answer);
      if (answer.status !== 200)
        throw answer.status >= 500 || answer.status === 429
          ? unavailable(null, 'POST', '/v1/oauth2/token', attempt, answer)
          : rejected(answer, 'get an access token');
      const value = str(answer.body?.access_token);
      const expiresIn = Number(answer.body?.expires_in);
      if (!value || !Number.isFinite(expiresIn) || expiresIn <= 0) throw badResponse('the token answer has no access_token or expires_in');
      this.deps.secrets?.add(value);
      this.token = { value, expiresAt: this.deps.clock.now().getTime() + expiresIn * 1000 };
      return value;
    }
  }

  /** One request through the guard; the body parsed as JSON when it is JSON. */
  private async send(method: 'GET' | 'POST', path: string, headers: Record<string, string | undefined> & { body?: string }): Promise<Answer> {
    const { body, ...rest } = headers;
    const clean: Record<string, string> = { Accept: 'application/json' };
    for (const [k, v] of Object.entries(rest)) if (v !== undefined) clean[k] = v;
    const res: OutboundResponse = await this.deps.guard.fetch(`${this.base}${path}`, {
      method,
      headers: clean,
      body,
      maxRedirects: 0,
      timeoutMs: this.timeoutMs,
      connectTimeoutMs: Math.min(this.timeoutMs, 10_000),
      maxBytes: MAX_BODY,
    });
    const text = res.body.toString('utf8');
    let parsed: Json | null = null;
    try {
      const value: unknown = text ? JSON.parse(text) : null;
      parsed = isObject(value) ? value : null;
    } catch {
      parsed = null;
    }
    if (res.status >= 200 && res.status < 300 && !parsed) throw badResponse(`${method} ${path.split('?')[0]} answered ${res.status} without a JSON object`);
    return { status: res.status, body: parsed, text };
  }
}

function checkBatch(senderBatchId: string, items: readonly PayPalPayoutItem[]): void {
  const bad = (message: string) => new ServiceError('svc_paypal_rejected', message, 400);
  if (!senderBatchId || senderBatchId.length > 256) throw bad('A sender_batch_id is 1 to 256 characters.');
  if (items.length === 0) throw bad('A PayPal batch needs at least one item.');
  if (items.length > PAYPAL_MAX_ITEMS) throw bad(`A PayPal batch holds at most ${PAYPAL_MAX_ITEMS} items, not ${items.length}: split it.`);
  const seen = new Set<string>();
  for (const i of items) {
    if (!i.sender_item_id || i.sender_item_id.length > 63) throw bad('A sender_item_id is 1 to 63 characters.');
    if (seen.has(i.sender_item_id)) throw bad(`The sender_item_id ${i.sender_item_id} is in the batch twice.`);
    seen.add(i.sender_item_id);
    if (!i.receiver || i.receiver.length > 127) throw bad(`Item ${i.sender_item_id}: the receiver is 1 to 127 characters.`);
    if (!/^\d{1,12}(\.\d{1,3})?$/.test(i.amount.value)) throw bad(`Item ${i.sender_item_id}: the amount is a decimal string such as "12.50".`);
    if (!/^[A-Z]{3}$/.test(i.amount.currency)) throw bad(`Item ${i.sender_item_id}: the currency is an ISO 4217 code.`);
  }
}

function isTransient(err: unknown): boolean {
  if (!isServiceError(err) || err.code !== 'svc_fetch_blocked') return false;
  return err.data.reason === 'timeout' || err.data.reason === 'connection_failed';
}

function badResponse(what: string): ServiceError {
  return new ServiceError('svc_paypal_bad_response', `PayPal answered something unexpected: ${what}.`, 502);
}

function authFailed(answer: Answer): ServiceError {
  const { text, debugId } = describeError(answer);
  return new ServiceError(
    'svc_paypal_auth_failed',
    `PayPal refused the credentials (${text}): check client_id and client_secret, and that they belong to the environment chosen (sandbox or live).`,
    502,
    { upstream_status: answer.status, ...(debugId ? { debug_id: debugId } : {}) },
  );
}

function rejected(answer: Answer, doing: string): ServiceError {
  const { name, text, debugId } = describeError(answer);
  return new ServiceError('svc_paypal_rejected', `PayPal refused to ${doing}: ${text}.`, 422, {
    upstream_status: answer.status,
    paypal_error: name,
    ...(debugId ? { debug_id: debugId } : {}),
  });
}

function unavailable(err: unknown, method: string, path: string, attempts: number, answer?: Answer): ServiceError {
  if (err && !isTransient(err)) return err as ServiceError;
  const where = `${method} ${path.split('?')[0]}`;
  const why = answer ? describeError(answer).text : isServiceError(err) ? String(err.data.reason) : 'no answer';
  return new ServiceError('svc_paypal_unavailable', `PayPal did not complete ${where} after ${attempts} attempt(s) (${why}); it is safe to send again.`, 503, {
    attempts,
    ...(answer ? { upstream_status: answer.status } : {}),
  });
}
