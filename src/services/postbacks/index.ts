// The postback endpoint's logic: switches, limits, the network's own authentication, strict
// parsing, then the orders service. Every postback that gets past the switches is stored with its
// outcome; an accepted one in the same transaction as the order change it made, so a record
// exists exactly when the change does. Test postbacks are checked and stored, never recorded as
// orders. Refusals are counted per client (throttle.ts): a flood of them is aggregated,
// then answered 429 before any work, so it cannot fill the database or the log.
import type { Clock } from '../../clock.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../db/database.js';
import { translateDbError } from '../../db/errors.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import type { Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService, PostbackView } from '../networks/index.js';
import { notFound } from '../networks/index.js';
import type { OrderReport, OrderService } from '../orders/index.js';
import { PostbackRecorder, Replayed, replayRecord, StaleView, type Recorded } from './recorder.js';
import { authenticate, type Auth } from './auth.js';
import { checkFields, decodeBody, decodeParams, EncodingError, fieldData } from './input.js';
import type { StatusCounts } from '../../db/lists.js';
import {
  PostbackStore,
  storedParams,
  type Aggregated,
  type NewPostbackRecord,
  type PostbackCountFilters,
  type PostbackFilters,
  type PostbackRecord,
} from './records.js';
import { aggregateKey, PostbackThrottle } from './throttle.js';
import { PostbackTester, type TestInput, type TestResult } from './test.js';
import { noMetrics, type Metrics } from '../../metrics.js';
import type { SelfUrl } from '../../self-url.js';

export { POSTBACK_OUTCOMES, type PostbackOutcome, type PostbackRecord } from './records.js';
export { PostbackCounts } from './counts.js';

/** One request to `/postback/{network}`, as the route hands it over. */
export interface PostbackRequest {
  network: string;
  method: 'GET' | 'POST';
  /** The query string exactly as received, without `?`. */
  rawQuery: string;
  rawBody: Buffer | null;
  contentType: string | null;
  /** X-Postback-Token and X-Postback-Signature. */
  tokenHeader: string | null;
  signatureHeader: string | null;
  ip: string | null;
  requestId: string;
  /** The body passed `postbacks.max_body_bytes` (it was not read). */
  bodyTooLarge?: boolean;
}

/** The headers a network may authenticate a postback with (read by the route, checked here). */
export { SIGNATURE_HEADER, TOKEN_HEADER } from './auth.js';

/** The answer to the network: 200 with `{ok, order_id, status, duplicate, test, postback_id}`. */
export interface PostbackAnswer {
  ok: true;
  order_id: number | null;
  status: string;
  duplicate: boolean;
  test: boolean;
  postback_id: number;
  ignored?: string[];
}

export interface PostbackServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  /** The outbox: a stored refusal goes to webhooks in its transaction (postback.rejected). */
  events: WebhookEvents;
  keys: Keys;
  networks: NetworkService;
  orders: OrderService;
  config: Pick<Config, 'postbacks'>;
  /** The daemon's own base URL (server.public_url, else its listening address): test postbacks go there. */
  selfUrl: SelfUrl;
  /** Outcomes counted per network (none when absent). */
  metrics?: Metrics;
}

/** The orders service's refusals, as the postback codes for the same problem. */
const ORDER_CODES: Record<string, string> = { svc_invalid_amount: 'svc_postback_invalid_amount', svc_invalid_currency: 'svc_postback_invalid_currency' };

/** Receives postbacks, lists and prunes their records, and sends test postbacks. */
export class PostbackService {
  private readonly store: PostbackStore;
  private readonly tester: PostbackTester;
  private readonly recorder: PostbackRecorder;
  private readonly throttle: PostbackThrottle;

  constructor(private readonly deps: PostbackServiceDeps) {
    this.store = new PostbackStore(deps.db);
    this.throttle = new PostbackThrottle({ db: deps.db, clock: deps.clock, logger: deps.logger, limits: deps.config.postbacks.rejections });
    this.tester = new PostbackTester({ ...deps, store: this.store });
    // SQLite has one writer: a second batch in flight would only wait for the first.
    const inFlight = deps.db.singleWriter ? 1 : deps.config.postbacks.batches_in_flight;
    this.recorder = new PostbackRecorder({
      db: deps.db,
      networks: deps.networks,
      orders: deps.orders,
      store: this.store,
      batchMax: deps.config.postbacks.batch_max,
      inFlight,
    });
  }

  /** Where this daemon receives postbacks: `server.public_url`, else the listening address. */
  get selfUrl(): string | null {
    return this.deps.selfUrl.get();
  }

  /**
   * Handles one postback. Returns the 200 answer, or throws the refusal: 403
   * svc_postbacks_disabled and 404 svc_network_not_found (nothing stored), 429
   * svc_postback_throttled (nothing stored, nothing logged), 401 svc_postback_unauthorized, 413/414
   * svc_postback_too_large and 400 svc_postback_* (stored as `rejected`, or counted on an
   * aggregated record), and faults (stored as `error`).
   */
  async receive(req: PostbackRequest): Promise<PostbackAnswer> {
    if (!this.deps.config.postbacks.enabled) throw this.disabled();
    // A flooding client costs a map lookup: no view, no parsing, no signature, no write.
    const throttled = this.throttle.check(req.network, req.ip);
    if (throttled) throw throttled;
    // The view of the network this process keeps saves a read per postback: an accepted postback
    // is checked against the current revision by its batch; anything else is decided afresh.
    const kept = this.deps.networks.keptPostbackView(req.network);
    if (kept) {
      try {
        return await this.handle(req, kept, true);
      } catch (err) {
        if (!(err instanceof StaleView)) throw err;
      }
    }
    return this.handle(req, await this.deps.networks.postbackView(req.network), false);
  }

  /** `receive` on one view of the network; a kept view throws StaleView instead of deciding anything but acceptance. */
  private async handle(req: PostbackRequest, view: PostbackView, kept: boolean): Promise<PostbackAnswer> {
    const fresh = () => {
      if (kept) throw new StaleView();
    };
    const target = view.target;
    if (!target) throw (fresh(), notFound(req.network));
    if (!target.postbacksEnabled) throw (fresh(), this.disabled());

    const base = { received_at: this.deps.clock.now(), network: target.id, ip: req.ip, method: req.method, test: false, request_id: req.requestId };
    const limits = this.deps.config.postbacks;
    if (Buffer.byteLength(req.rawQuery, 'latin1') > limits.max_query_bytes || req.bodyTooLarge) {
      fresh();
      const where = req.bodyTooLarge ? 'body' : 'query string';
      const err = new ServiceError(
        'svc_postback_too_large',
        `The postback ${where} is longer than ${req.bodyTooLarge ? limits.max_body_bytes : limits.max_query_bytes} bytes.`,
        req.bodyTooLarge ? 413 : 414,
      );
      throw await this.reject(base, { truncated: true, query_bytes: Buffer.byteLength(req.rawQuery, 'latin1') }, err, undefined, {}, false);
    }

    // What was sent, readable whatever it is, for the record (secrets redacted when stored).
    const loose = { query: decodeParams(req.rawQuery, false), body: safe(() => decodeBody(req.rawBody, req.contentType, false)) };
    const looseTest = single(loose.query.test) === '1';
    let auth: Auth;
    try {
      auth = authenticate(target, req, loose.query, looseTest, {
        now: this.deps.clock.now(),
        key: this.deps.keys.postback,
        toleranceSeconds: this.deps.config.postbacks.signature_tolerance_seconds,
        openSecret: (sealed) => this.deps.networks.openPostbackSecret(target.id, sealed),
      });
    } catch (err) {
      fresh();
      // A stored secret that no longer opens (CASHTRACK_SECRET changed): our fault, not the sender's.
      const known = err instanceof ServiceError ? err : null;
      await this.save({
        ...base,
        params: storedParams(loose, []),
        outcome: 'error',
        code: known?.code ?? 'svc_internal_error',
        message: known?.message ?? 'An internal error occurred.',
      }).catch(() => {});
      throw err;
    }
    const params = storedParams(loose, auth.presented);
    if (!auth.ok) {
      fresh();
      this.deps.hooks.doAction(HOOKS.authFailed, {
        code: 'svc_postback_unauthorized',
        reason: auth.reason,
        ip: req.ip,
        method: 'postback',
        network: target.id,
      });
      throw await this.reject(
        { ...base, test: looseTest },
        params,
        new ServiceError('svc_postback_unauthorized', 'The postback is not authenticated for this network.', 401),
        auth.reason,
        {},
        false,
      );
    }

    let values: ReturnType<typeof checkFields>;
    let test = false;
    try {
      const query = decodeParams(req.rawQuery, true);
      const body = decodeBody(req.rawBody, req.contentType, true);
      test = single(query.test) === '1';
      const fields = target.module.parsePostback(query, body ?? undefined);
      values = checkFields(fields, target.module, target.mapping);
    } catch (err) {
      fresh();
      const refusal =
        err instanceof EncodingError
          ? new ServiceError('svc_postback_invalid_encoding', `The postback contains ${err.message}.`, 400)
          : err instanceof ServiceError
            ? err
            : new ServiceError('svc_postback_unreadable', `The postback could not be read: ${String((err as Error)?.message ?? err).slice(0, 200)}`, 400);
      throw await this.reject({ ...base, test: test || looseTest }, params, refusal, undefined, {}, true);
    }

    const described = { transaction_id: values.transaction_id, status: values.status };
    if (test) {
      fresh();
      const record = await this.save({
        ...base,
        ...described,
        test: true,
        params: params,
        outcome: 'accepted',
        code: 'svc_postback_test',
        message: 'Test postback: checked and stored; no order was recorded.',
      });
      return { ok: true, order_id: null, status: values.status, duplicate: false, test: true, postback_id: record.id };
    }

    // A replayed signed request is caught by the unique replay key when its record is inserted, in
    // the order's transaction: the whole change rolls back and the first answer is repeated.
    let recorded: Recorded;
    try {
      const input = {
        network: target.id,
        transaction_id: values.transaction_id,
        source: 'postback' as const,
        status: values.status,
        sub_id: values.sub_id,
        member_ref: values.member_ref,
        advertiser: values.advertiser,
        merchant_ref: values.merchant_ref,
        sale_amount: values.sale_amount,
        commission: values.commission,
        currency: values.currency,
        event_at: values.event_at,
        raw: JSON.parse(params),
      };
      let report: OrderReport;
      try {
        report = this.deps.orders.prepare(input, 'postback', { quiet: kept });
      } catch (err) {
        throw (fresh(), err);
      }
      recorded = await this.recorder.record(
        report,
        { ...base, ...described, params, outcome: 'accepted', replay_key: auth.replayKey },
        kept ? view.revision : null,
      );
    } catch (err) {
      if (err instanceof StaleView) throw err;
      if (err instanceof Replayed) {
        const seen = await this.store.byReplayKey(auth.replayKey!);
        if (seen) return this.replayed(base, described, params, seen);
      }
      if (err instanceof ServiceError && err.status === 400) {
        const code = err.code.startsWith('svc_postback_') ? err.code : (ORDER_CODES[err.code] ?? 'svc_postback_invalid_param');
        // The orders service names the field; the postback's answer also names the parameter, as its own checks do.
        const about = typeof err.data.field === 'string' ? fieldData(err.data.field, target.mapping ?? {}) : {};
        throw await this.reject(base, params, new ServiceError(code, err.message, 400, { ...err.data, ...about }), undefined, described, true);
      }
      const known = err instanceof ServiceError ? err : translateDbError(err);
      await this.save({
        ...base,
        ...described,
        params: params,
        outcome: 'error',
        code: known?.code ?? 'svc_internal_error',
        message: known?.message ?? 'An internal error occurred.',
      }).catch(() => {});
      throw err;
    }
    const { change, record } = recorded;
    this.announce(record);
    return {
      ok: true,
      order_id: change.id,
      status: change.status,
      duplicate: change.duplicate,
      test: false,
      postback_id: record.id,
      ...(change.ignored.length ? { ignored: change.ignored } : {}),
    };
  }

  /** A network's received postbacks, newest first. */
  async list(filters: PostbackFilters): Promise<{ items: PostbackRecord[]; total: number }> {
    await this.deps.networks.module(filters.network);
    return this.store.list(filters);
  }

  /** The views row of a network's postback list: postbacks per outcome (every outcome, 0 included). */
  async counts(filters: PostbackCountFilters): Promise<StatusCounts> {
    await this.deps.networks.module(filters.network);
    return this.store.counts(filters);
  }

  /** Deletes records older than `postbacks.retention_days` (or `days`), and the refusal counts of windows that are over. */
  async prune(days = this.deps.config.postbacks.retention_days): Promise<number> {
    await this.throttle.prune();
    const deleted = await this.store.prune(new Date(this.deps.clock.now().getTime() - days * 86_400_000));
    if (deleted) this.deps.logger.info('postbacks', 'Postback records pruned', { deleted, retention_days: days });
    return deleted;
  }

  /** Sends an authenticated test postback over HTTP to this daemon's own endpoint (see PostbackTester). */
  sendTest(network: string, input: TestInput, actor: string): Promise<TestResult> {
    return this.tester.send(network, input, actor);
  }

  private disabled(): ServiceError {
    return new ServiceError('svc_postbacks_disabled', 'Postbacks are switched off.', 403);
  }

  /** Logs the summaries of the throttles this process keeps (it is stopping). */
  close(): void {
    this.throttle.close();
  }

  /**
   * Counts a refusal on its client and returns the error to throw: the refusal itself (with the
   * record id, past authentication), or 429 svc_postback_throttled when the client is past the
   * limit (nothing stored). The first `aggregate_after` refusals of a client's window are stored
   * one by one; later ones of the same kind (code and reason, or the field at fault) are counted
   * on one record. Only a stored new record fires the hook and writes a log line.
   * `authenticated`: the sender proved it holds the network's secret (its refusals never throttle).
   */
  private async reject(
    base: Omit<NewPostbackRecord, 'params' | 'outcome'>,
    params: unknown,
    err: ServiceError,
    reason: string | undefined,
    described: { transaction_id?: string; status?: string },
    authenticated: boolean,
  ): Promise<ServiceError> {
    const rec: NewPostbackRecord = {
      ...base,
      ...described,
      params: typeof params === 'string' ? params : storedParams(params, []),
      outcome: 'rejected',
      code: err.code,
      message: reason ? `${err.message} (${reason})` : err.message,
    };
    const kind = `${err.code}:${reason ?? String(err.data?.field ?? err.data?.param ?? '')}`;
    const aggregateAfter = this.deps.config.postbacks.rejections.aggregate_after;
    const { tally, stored } = await this.deps.db.transaction(async (t) => {
      // The client's row stays locked to the end: its refusals are decided one at a time.
      const tally = await this.throttle.count(base.network, base.ip, authenticated, t);
      if (this.throttle.over(tally, authenticated)) return { tally, stored: null };
      if (tally.refusals <= aggregateAfter) {
        const record = await this.store.insert(rec, t);
        await this.deps.events.emit(t, HOOKS.postbackRejected, record);
        return { tally, stored: { created: true, record } as Aggregated };
      }
      return { tally, stored: await this.store.aggregate(rec, aggregateKey(base.network, base.ip, kind, tally.windowStart), t) };
    });
    const throttled = this.throttle.settle(base.network, base.ip, tally, authenticated);
    // A stored record counts itself (announce); an aggregated or throttled refusal is counted here.
    if (!stored?.created) (this.deps.metrics ?? noMetrics).postback(base.network, stored ? 'rejected' : 'throttled');
    if (!stored)
      return (
        throttled ??
        new ServiceError(
          'svc_postback_throttled',
          'Too many refused postbacks from this address: retry in 1 s.',
          429,
          { retry_after: 1 },
          { 'Retry-After': '1' },
        )
      );
    const id = stored.created ? stored.record.id : stored.id;
    if (stored.created) {
      this.announce(stored.record);
      this.deps.logger.warning(
        'postbacks',
        'Postback refused',
        { network: base.network, code: err.code, reason, ip: base.ip, postback_id: id, ...(tally.refusals > aggregateAfter ? { aggregated: true } : {}) },
        base.request_id ?? undefined,
      );
    }
    if (err.status === 401) return err;
    return new ServiceError(err.code, err.message, err.status, { ...err.data, postback_id: id }, err.headers);
  }

  private async replayed(
    base: Omit<NewPostbackRecord, 'params' | 'outcome'>,
    described: object,
    params: string,
    seen: PostbackRecord,
  ): Promise<PostbackAnswer> {
    const record = await this.save(replayRecord({ ...base, ...described, params, outcome: 'duplicate' }, seen));
    return { ok: true, order_id: seen.order_id, status: seen.status ?? 'pending', duplicate: true, test: false, postback_id: record.id };
  }

  private async save(rec: NewPostbackRecord): Promise<PostbackRecord> {
    const record = await this.store.insert(rec);
    this.announce(record);
    return record;
  }

  private announce(record: PostbackRecord): void {
    (this.deps.metrics ?? noMetrics).postback(record.network, record.outcome);
    if (record.outcome === 'accepted' || record.outcome === 'duplicate')
      this.deps.logger.debug(
        'postbacks',
        'Postback received',
        { network: record.network, postback_id: record.id, outcome: record.outcome, order_id: record.order_id, test: record.test },
        record.request_id ?? undefined,
      );
    this.deps.hooks.doAction(HOOKS.postbackReceived, record);
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? (new Set(value).size === 1 ? value[0] : undefined) : value;
}

function safe<T>(fn: () => T): T | { unreadable: true } {
  try {
    return fn();
  } catch {
    return { unreadable: true };
  }
}
