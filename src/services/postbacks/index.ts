// The postback endpoint's logic: switches, limits, the network's own authentication, strict
// parsing, then the orders service. Every postback that gets past the switches is stored with its
// outcome; an accepted one in the same transaction as the order change it made, so a record
// exists exactly when the change does. Test postbacks are checked and stored, never recorded as
// orders. Refusals are counted per client (throttle.ts): a flood of them is aggregated,
// then answered 429 before any work, so it cannot fill the database or the log.
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation, translateDbError } from '../../db/errors.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { Keys } from '../keys.js';
import type { LogService } from '../logs.js';
import type { NetworkService, PostbackTarget, PostbackView } from '../networks.js';
import { notFound } from '../networks.js';
import type { OrderOutcome, OrderReport, OrderService, OrderStatus } from '../orders.js';
import type { Transaction } from '../../db/transaction.js';
import { BatchQueue } from '../batches.js';
import { ipAllowed, parseSignatureHeader, safeEqual, signatureMatches, testSigningKey, tokenHash } from './auth.js';
import { checkFields, decodeBody, decodeParams, EncodingError, type ParamMap } from './input.js';
import { PostbackStore, storedParams, type Aggregated, type NewPostbackRecord, type PostbackFilters, type PostbackRecord } from './records.js';
import { aggregateKey, PostbackThrottle } from './throttle.js';
import { PostbackTester, type TestInput, type TestResult } from './test.js';

export { POSTBACK_OUTCOMES, type PostbackOutcome, type PostbackRecord } from './records.js';

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
  keys: Keys;
  networks: NetworkService;
  orders: OrderService;
  config: Pick<Config, 'postbacks' | 'server'>;
}

type Auth = { ok: true; replayKey: string | null; presented: string[] } | { ok: false; reason: string; presented: string[] };

/** The orders service's refusals, as the postback codes for the same problem. */
const ORDER_CODES: Record<string, string> = { svc_invalid_amount: 'svc_postback_invalid_amount', svc_invalid_currency: 'svc_postback_invalid_currency' };

/** A concurrent identical signed request committed first. */
class Replayed extends Error {}

/** The kept view of the network a postback was decided on is no longer current: decide it again. */
class StaleView extends Error {}

type Recorded = { change: OrderOutcome; record: PostbackRecord };

/** An accepted postback waiting for its batch: its report, its record-to-be and its answer. */
type Queued = { report: OrderReport; record: NewPostbackRecord; revision: string | null; resolve: (r: Recorded) => void; reject: (err: unknown) => void };

const replayKeys = (items: Queued[]) => items.map((i) => i.record.replay_key).filter((k): k is string => !!k);

/** The record of a replayed signed request: a duplicate of the first one's order. */
function replayRecord(record: NewPostbackRecord, seen: PostbackRecord): NewPostbackRecord {
  return { ...record, replay_key: null, outcome: 'duplicate', code: 'svc_postback_replayed', order_id: seen.order_id, message: `The same signed request was received before (postback ${seen.id}); nothing was applied again.` };
}

/** The record of an accepted postback, once its order change is known. */
function accepted(item: Queued, change: OrderOutcome): NewPostbackRecord {
  const held = change.held ? ' Held for review: no ledger effect until an administrator releases the order.' : '';
  return { ...item.record, outcome: change.duplicate ? 'duplicate' : 'accepted', order_id: change.id, message: (change.ignored.length ? `Not applied: ${change.ignored.join(', ')}.${held}` : held.trim()) || null };
}

/** Receives postbacks, lists and prunes their records, and sends test postbacks. */
export class PostbackService {
  private readonly store: PostbackStore;
  private readonly tester: PostbackTester;
  private readonly queue: BatchQueue<Queued>;
  private readonly throttle: PostbackThrottle;
  private listening: string | null = null;

  constructor(private readonly deps: PostbackServiceDeps) {
    this.store = new PostbackStore(deps.db);
    this.throttle = new PostbackThrottle({ db: deps.db, clock: deps.clock, logger: deps.logger, limits: deps.config.postbacks.rejections });
    this.tester = new PostbackTester({ ...deps, store: this.store, selfUrl: () => this.selfUrl });
    // SQLite has one writer: a second batch in flight would only wait for the first.
    const inFlight = deps.db.singleWriter ? 1 : deps.config.postbacks.batches_in_flight;
    this.queue = new BatchQueue((items) => this.recordBatch(items), deps.config.postbacks.batch_max, inFlight);
  }

  /** The daemon's listening address (the server calls this once it listens). */
  setSelfUrl(url: string): void {
    this.listening = url.replace(/\/+$/, '');
  }

  /** Where this daemon receives postbacks: `server.public_url`, else the listening address. */
  get selfUrl(): string | null {
    return this.deps.config.server.public_url?.replace(/\/+$/, '') ?? this.listening;
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
      const err = new ServiceError('svc_postback_too_large', `The postback ${where} is longer than ${req.bodyTooLarge ? limits.max_body_bytes : limits.max_query_bytes} bytes.`, req.bodyTooLarge ? 413 : 414);
      throw await this.reject(base, { truncated: true, query_bytes: Buffer.byteLength(req.rawQuery, 'latin1') }, err, undefined, {}, false);
    }

    // What was sent, readable whatever it is, for the record (secrets redacted when stored).
    const loose = { query: decodeParams(req.rawQuery, false), body: safe(() => decodeBody(req.rawBody, req.contentType, false)) };
    const looseTest = single(loose.query.test) === '1';
    let auth: Auth;
    try {
      auth = this.authenticate(target, req, loose.query, looseTest);
    } catch (err) {
      fresh();
      // A stored secret that no longer opens (CASHTRACK_SECRET changed): our fault, not the sender's.
      const known = err instanceof ServiceError ? err : null;
      await this.save({ ...base, params: storedParams(loose, []), outcome: 'error', code: known?.code ?? 'svc_internal_error', message: known?.message ?? 'An internal error occurred.' }).catch(() => {});
      throw err;
    }
    const params = storedParams(loose, auth.presented);
    if (!auth.ok) {
      fresh();
      this.deps.hooks.doAction(HOOKS.authFailed, { code: 'svc_postback_unauthorized', reason: auth.reason, ip: req.ip, method: 'postback', network: target.id });
      throw await this.reject({ ...base, test: looseTest }, params, new ServiceError('svc_postback_unauthorized', 'The postback is not authenticated for this network.', 401), auth.reason, {}, false);
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
      const record = await this.save({ ...base, ...described, test: true, params: params, outcome: 'accepted', code: 'svc_postback_test', message: 'Test postback: checked and stored; no order was recorded.' });
      return { ok: true, order_id: null, status: values.status, duplicate: false, test: true, postback_id: record.id };
    }

    // A replayed signed request is caught by the unique replay key when its record is inserted, in
    // the order's transaction: the whole change rolls back and the first answer is repeated.
    let recorded: Recorded;
    try {
      const input = { network: target.id, transaction_id: values.transaction_id, source: 'postback' as const, status: values.status, sub_id: values.sub_id, advertiser: values.advertiser, merchant_ref: values.merchant_ref, sale_amount: values.sale_amount, commission: values.commission, currency: values.currency, event_at: values.event_at, raw: JSON.parse(params) };
      let report: OrderReport;
      try {
        report = this.deps.orders.prepare(input, 'postback', { quiet: kept });
      } catch (err) {
        throw (fresh(), err);
      }
      recorded = await new Promise<Recorded>((resolve, reject) => this.queue.submit({ report, revision: kept ? view.revision : null, record: { ...base, ...described, params, outcome: 'accepted', replay_key: auth.replayKey }, resolve, reject }));
    } catch (err) {
      if (err instanceof StaleView) throw err;
      if (err instanceof Replayed) {
        const seen = await this.store.byReplayKey(auth.replayKey!);
        if (seen) return this.replayed(base, described, params, seen);
      }
      if (err instanceof ServiceError && err.status === 400) {
        const code = err.code.startsWith('svc_postback_') ? err.code : (ORDER_CODES[err.code] ?? 'svc_postback_invalid_param');
        throw await this.reject(base, params, new ServiceError(code, err.message, 400, err.data), undefined, described, true);
      }
      const known = err instanceof ServiceError ? err : translateDbError(err);
      await this.save({ ...base, ...described, params: params, outcome: 'error', code: known?.code ?? 'svc_internal_error', message: known?.message ?? 'An internal error occurred.' }).catch(() => {});
      throw err;
    }
    const { change, record } = recorded;
    this.announce(record);
    return { ok: true, order_id: change.id, status: change.status, duplicate: change.duplicate, test: false, postback_id: record.id, ...(change.ignored.length ? { ignored: change.ignored } : {}) };
  }

  /**
   * Records a batch of accepted postbacks: their orders and records in one transaction. When that
   * fails (one report refused, a signature replayed, a fault) each is recorded again on its own,
   * so it gets its own answer. Postbacks repeating a signed request of the batch go on their own
   * after it, and find its record.
   */
  private async recordBatch(queued: Queued[]): Promise<void> {
    try {
      // Postbacks decided on a kept view of their network go on only if it is still current.
      const [revision, stored] = await Promise.all([queued.some((i) => i.revision !== null) ? this.deps.networks.postbacksRevision() : null, this.store.byReplayKeys(replayKeys(queued))]);
      const items = queued.filter((i) => i.revision === null || i.revision === revision || void i.reject(new StaleView()));
      // A signed request stored before is a replay: answered from its record, nothing recorded.
      const replays: [Queued, PostbackRecord][] = [];
      const together: Queued[] = [];
      const after: Queued[] = [];
      const keys = new Set<string>();
      for (const item of items) {
        const key = item.record.replay_key;
        const seen = key ? stored.get(key) : undefined;
        if (seen) replays.push([item, seen]);
        else if (key && keys.has(key)) after.push(item);
        else (key && keys.add(key), together.push(item));
      }
      let alone = together.length === 1 ? together : [];
      if (together.length > 1) {
        try {
          let records: PostbackRecord[] = [];
          const changes = await this.deps.orders.recordOutcomes(
            together.map((i) => i.report),
            'postback',
            { record: async (changes, t) => void (records = await this.storeAccepted(together.map((item, k) => accepted(item, changes[k])), t)) },
          );
          together.forEach((item, k) => item.resolve({ change: changes[k], record: records[k] }));
        } catch {
          alone = together;
        }
      }
      await Promise.all(alone.map((item) => this.recordAlone(item)));
      // The same signed request twice in one batch: the copy finds the first one's record.
      const now = await this.store.byReplayKeys(replayKeys(after));
      for (const item of after) {
        const seen = now.get(item.record.replay_key!);
        if (seen) replays.push([item, seen]);
        else await this.recordAlone(item);
      }
      await this.answerReplays(replays);
    } catch (err) {
      // Never leave a request waiting (a settled promise ignores a second answer).
      for (const item of queued) item.reject(err);
    }
  }

  /** Stores the records of replayed requests (one statement) and answers each with its first order. */
  private async answerReplays(replays: [Queued, PostbackRecord][]): Promise<void> {
    if (replays.length === 0) return;
    try {
      const records = await this.deps.db.transaction((t) => this.store.insertMany(replays.map(([item, seen]) => replayRecord(item.record, seen)), t));
      replays.forEach(([item, seen], k) => item.resolve({ change: { id: seen.order_id!, status: (seen.status ?? 'pending') as OrderStatus, duplicate: true, changes: [], ignored: [] }, record: records[k] }));
    } catch (err) {
      for (const [item] of replays) item.reject(err);
    }
  }

  private async recordAlone(item: Queued): Promise<void> {
    try {
      let record: PostbackRecord | undefined;
      const [change] = await this.deps.orders.recordOutcomes([item.report], 'postback', { record: async ([result], t) => void ([record] = await this.storeAccepted([accepted(item, result)], t)) });
      item.resolve({ change, record: record! });
    } catch (err) {
      item.reject(err);
    }
  }

  /** Inserts the records of accepted postbacks; a replayed signature (unique replay key) throws Replayed. */
  private async storeAccepted(records: NewPostbackRecord[], t: Transaction): Promise<PostbackRecord[]> {
    try {
      return records.length === 1 ? [await this.store.insert(records[0], t)] : await this.store.insertMany(records, t);
    } catch (err) {
      if (records.some((r) => r.replay_key) && isUniqueViolation(err)) throw new Replayed();
      throw err;
    }
  }

  /** A network's received postbacks, newest first. */
  async list(filters: PostbackFilters): Promise<{ items: PostbackRecord[]; total: number }> {
    await this.deps.networks.module(filters.network);
    return this.store.list(filters);
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

  private authenticate(target: PostbackTarget, req: PostbackRequest, query: ParamMap, test: boolean): Auth {
    const presented: string[] = [];
    if (!ipAllowed(target.ipAllowlist, req.ip)) return { ok: false, reason: 'ip_not_allowed', presented };
    const queryTokens = [...new Set(([] as string[]).concat(query.token ?? []))];
    const tokens = [...new Set([...queryTokens, ...(req.tokenHeader ? [req.tokenHeader] : [])])];
    presented.push(...tokens);
    const signature = req.signatureHeader ? parseSignatureHeader(req.signatureHeader) : null;
    if (req.signatureHeader) presented.push(req.signatureHeader);
    if (req.signatureHeader && !signature) return { ok: false, reason: 'malformed_signature', presented };
    if (!target.secret) return { ok: false, reason: 'no_secret_configured', presented };
    if (tokens.length > 1) return { ok: false, reason: 'ambiguous_token', presented };

    const now = this.deps.clock.now();
    const payload = req.method === 'GET' ? req.rawQuery : (req.rawBody ?? Buffer.alloc(0));
    const fresh = signature ? Math.abs(now.getTime() / 1000 - signature.t) <= this.deps.config.postbacks.signature_tolerance_seconds : false;
    // A test postback in token mode: signed with the daemon's own key, good for a test record only.
    if (test && signature?.test.length) {
      if (!fresh) return { ok: false, reason: 'stale_signature', presented };
      return signatureMatches(testSigningKey(this.deps.keys.postback, target.id), signature.t, payload, signature.test) ? { ok: true, replayKey: null, presented } : { ok: false, reason: 'bad_signature', presented };
    }
    const secrets = [target.secret, ...(target.previousSecret && target.previousUntil && target.previousUntil > now ? [target.previousSecret] : [])];
    let reason = tokens.length || signature ? 'bad_credentials' : 'missing_credentials';
    for (const stored of secrets) {
      if (stored.startsWith('h1:')) {
        if (tokens.length === 1 && safeEqual(tokenHash(this.deps.keys.postback, target.id, tokens[0]), stored)) return { ok: true, replayKey: null, presented };
        if (tokens.length) reason = 'bad_token';
      } else if (signature?.v1.length) {
        if (!fresh) return { ok: false, reason: 'stale_signature', presented };
        // A POST's query string is not signed: it may carry nothing.
        if (req.method === 'POST' && req.rawQuery) return { ok: false, reason: 'unsigned_query', presented };
        const match = signatureMatches(this.deps.networks.openPostbackSecret(target.id, stored), signature.t, payload, signature.v1);
        if (match) return { ok: true, replayKey: createHash('sha256').update(`${target.id}:${match}`).digest('hex'), presented };
        reason = 'bad_signature';
      }
    }
    return { ok: false, reason, presented };
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
  private async reject(base: Omit<NewPostbackRecord, 'params' | 'outcome'>, params: unknown, err: ServiceError, reason: string | undefined, described: { transaction_id?: string; status?: string }, authenticated: boolean): Promise<ServiceError> {
    const rec: NewPostbackRecord = { ...base, ...described, params: typeof params === 'string' ? params : storedParams(params, []), outcome: 'rejected', code: err.code, message: reason ? `${err.message} (${reason})` : err.message };
    const kind = `${err.code}:${reason ?? String(err.data?.field ?? err.data?.param ?? '')}`;
    const aggregateAfter = this.deps.config.postbacks.rejections.aggregate_after;
    const { tally, stored } = await this.deps.db.transaction(async (t) => {
      // The client's row stays locked to the end: its refusals are decided one at a time.
      const tally = await this.throttle.count(base.network, base.ip, authenticated, t);
      if (this.throttle.over(tally, authenticated)) return { tally, stored: null };
      if (tally.refusals <= aggregateAfter) return { tally, stored: { created: true, record: await this.store.insert(rec, t) } as Aggregated };
      return { tally, stored: await this.store.aggregate(rec, aggregateKey(base.network, base.ip, kind, tally.windowStart), t) };
    });
    const throttled = this.throttle.settle(base.network, base.ip, tally, authenticated);
    if (!stored) return throttled ?? new ServiceError('svc_postback_throttled', 'Too many refused postbacks from this address: retry in 1 s.', 429, { retry_after: 1 }, { 'Retry-After': '1' });
    const id = stored.created ? stored.record.id : stored.id;
    if (stored.created) {
      this.announce(stored.record);
      this.deps.logger.warning('postbacks', 'Postback refused', { network: base.network, code: err.code, reason, ip: base.ip, postback_id: id, ...(tally.refusals > aggregateAfter ? { aggregated: true } : {}) }, base.request_id ?? undefined);
    }
    if (err.status === 401) return err;
    return new ServiceError(err.code, err.message, err.status, { ...err.data, postback_id: id }, err.headers);
  }

  private async replayed(base: Omit<NewPostbackRecord, 'params' | 'outcome'>, described: object, params: string, seen: PostbackRecord): Promise<PostbackAnswer> {
    const record = await this.save(replayRecord({ ...base, ...described, params, outcome: 'duplicate' }, seen));
    return { ok: true, order_id: seen.order_id, status: seen.status ?? 'pending', duplicate: true, test: false, postback_id: record.id };
  }

  private async save(rec: NewPostbackRecord): Promise<PostbackRecord> {
    const record = await this.store.insert(rec);
    this.announce(record);
    return record;
  }

  private announce(record: PostbackRecord): void {
    if (record.outcome === 'accepted' || record.outcome === 'duplicate') this.deps.logger.debug('postbacks', 'Postback received', { network: record.network, postback_id: record.id, outcome: record.outcome, order_id: record.order_id, test: record.test }, record.request_id ?? undefined);
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
