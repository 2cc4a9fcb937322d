// Coupons: read, edited by administrators, rewritten by the AI (with revert), and refreshed from
// the networks (refresh.ts). Who owns each field's text is the heart of it:
//   - the network, until an administrator edits the field (`edited_fields`) or the AI rewrites it
//     (`ai_fields`); from then on a refresh keeps the text and stores the network's latest value
//     in `network_values`, so `reset` gives the field back to the network without a refresh;
//   - an AI rewrite keeps the text from before the first rewrite (`original_*`) and who owned it
//     (`original_owners`), so `revert` restores it even after later edits.
// The active coupons per advertiser a shop page shows are a read model (counts.ts, CouponCounts).
import type { Clock } from '../../clock.js';
import type { Database, Transaction } from '../../db/database.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { LogService } from '../logs/index.js';
import {
  AI_FIELDS,
  COUPON_FIELDS,
  COUPON_ORDERBY,
  COUPON_STATUSES,
  LIST_COLUMNS,
  fieldList,
  originalOwners,
  parseJson,
  shapeCoupon,
  statusAt,
  statusCondition,
  type AiField,
  type Coupon,
  type CouponDetail,
  type CouponField,
  type CouponStatus,
  type OriginalOwners,
} from './rows.js';
import { editValue, fromColumn, sameValue, toColumn, type FieldValue } from './values.js';
import { Database as DatabaseClass } from '../../db/database.js';
import { ListWhere, orderClause, pageClause, valuesOf, type OneOrMany, type StatusCounts } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import type { AdvertiserService, MemberLink } from '../advertisers/index.js';
import type { Job, JobService } from '../jobs/index.js';
import type { NetworkService } from '../networks/index.js';
import { CouponRefresher, type RefreshCounts, type RefreshOptions } from './refresh.js';
import type { AiUsage } from '../ai/index.js';

export * from './rows.js';
export { CouponCounts } from './counts.js';
export type { RefreshCounts, RefreshOptions, RefreshState } from './refresh.js';

/** The filters of the coupon list and of its counts per status. */
export interface CouponWhere {
  network?: OneOrMany<string>;
  /** The network's advertiser id. */
  advertiser?: string;
  /** As of now: computed from the dates. */
  status?: OneOrMany<CouponStatus>;
  status_exclude?: OneOrMany<CouponStatus>;
  type?: 'code' | 'deal';
  /** Part of the title, or the start of the code. */
  search?: string;
  /** Coupons that end before this instant (open-ended ones never match). */
  expires_before?: Date;
  /** true: coupons with AI-written text; false: none. */
  ai?: boolean;
  /** true: coupons with an administrator's edits; false: none. */
  edited?: boolean;
  after?: Date;
  before?: Date;
}

/** The filters of `GET /coupons/counts`: the list's, without paging, sort and the status ones. */
export type CouponCountFilters = Omit<CouponWhere, 'status' | 'status_exclude'>;

export interface CouponFilters extends CouponWhere {
  /** Default id. */
  orderby?: (typeof COUPON_ORDERBY)[number];
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The WHERE of the coupon list and of its counts; statuses are computed from the dates at `now`. */
function couponWhere(f: CouponWhere, now: Date): ListWhere {
  const w = new ListWhere().anyOf('c.network', f.network).eq('c.advertiser', f.advertiser);
  const any = valuesOf(f.status).map((st) => statusCondition(st, now));
  if (any.length) w.add(`(${any.map((c) => c.sql).join(' OR ')})`, ...any.flatMap((c) => c.params));
  const none = valuesOf(f.status_exclude).map((st) => statusCondition(st, now));
  if (none.length) w.add(`NOT (${none.map((c) => c.sql).join(' OR ')})`, ...none.flatMap((c) => c.params));
  if (f.type) w.add(f.type === 'code' ? "c.code <> ''" : "c.code = ''");
  const search = f.search?.trim();
  if (search) w.add("(c.title LIKE ? ESCAPE '!' OR c.code LIKE ? ESCAPE '!')", DatabaseClass.likeContains(search), DatabaseClass.likePrefix(search));
  if (f.expires_before) w.add('c.ends_at IS NOT NULL AND c.ends_at < ?', f.expires_before);
  if (f.ai !== undefined) w.add(f.ai ? 'c.ai_fields IS NOT NULL' : 'c.ai_fields IS NULL');
  if (f.edited !== undefined) w.add(f.edited ? 'c.edited_fields IS NOT NULL' : 'c.edited_fields IS NULL');
  return w.after('c.created_at', f.after).before('c.created_at', f.before);
}

/** A partial edit: new values for some fields, and fields given back to the network. */
export type CouponPatch = Partial<Record<CouponField, unknown>> & { reset?: CouponField[] };

export interface CouponServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  networks: Pick<NetworkService, 'runtime' | 'recordRun' | 'module' | 'list'>;
  /** Members' links are the advertiser's tracking links (its checks included). */
  advertisers: Pick<AdvertiserService, 'trackingLink'>;
  /** Refresh jobs are queued here (`startRefresh`). */
  jobs: Pick<JobService, 'enqueue' | 'list'>;
  /** 0..1: the largest share of a network's coupons one full refresh may mark removed unless forced. */
  maxRemovedShare: number;
  /** The last AI generation of each coupon, shown by `get`: the AI domain's read model (the AI service owns those records). */
  aiUsage: Pick<AiUsage, 'lastFor'>;
}

/** A member's link to a coupon: the advertiser's tracking link, landing on the coupon's page when the network allows it. */
export type CouponLink = MemberLink & {
  coupon: number;
  code: string;
};

/** What `applyRewrite` is told about the rewrite (stored with the hook and the log line). */
export interface RewriteMeta {
  actor: string;
  model?: string | null;
  /** Anything else the caller wants on the `cashtrack.coupon.updated` hook (token usage...). */
  [key: string]: unknown;
}

const DETAIL_COLUMNS = `${LIST_COLUMNS}, c.network_values, c.raw, COALESCE(a.name_override, a.name) AS advertiser_name`;
const JOIN = 'coupons c LEFT JOIN advertisers a ON a.module = c.network AND a.advertiser = c.advertiser';

function notFound(id: unknown): ServiceError {
  return new ServiceError('svc_coupon_not_found', `Coupon ${String(id)} not found.`, 404, { id });
}

const list = <T>(items: Set<T>): string | null => (items.size ? JSON.stringify([...items]) : null);

/** Coupons: reads, administrators' edits, AI rewrites and their revert. */
export class CouponService {
  private readonly refresher: CouponRefresher;

  constructor(protected readonly deps: CouponServiceDeps) {
    this.refresher = new CouponRefresher({ ...deps, maxRemovedShare: deps.maxRemovedShare });
  }

  /**
   * Refreshes one network's coupons now (the `coupons.refresh` job calls it): see refresh.ts.
   * 404 svc_network_not_found, 409 svc_coupons_unsupported, 409 svc_coupons_mass_removal, and
   * the network's own errors.
   */
  refresh(network: string, options: RefreshOptions = {}): Promise<RefreshCounts> {
    return this.refresher.refresh(network, options);
  }

  /**
   * Starts a `coupons.refresh` job: of one network (404 svc_network_not_found, 409
   * svc_coupons_unsupported when its module lists no coupons) or of every enabled, configured
   * one. 409 svc_job_already_running while any coupon refresh is queued or running (two would
   * race over the same rows). The one way to start a refresh: the route and the CLI call it.
   */
  async startRefresh(input: { network?: string; force?: boolean; full?: boolean }, actor: string): Promise<Job> {
    if (input.network !== undefined) {
      const module = await this.deps.networks.module(input.network);
      if (!module.coupons) throw new ServiceError('svc_coupons_unsupported', `${module.name} has no coupon list to refresh from.`, 409, { network: module.id });
    }
    for (const status of ['running', 'queued', 'cancelling'] as const) {
      const [job] = (await this.deps.jobs.list({ type: 'coupons.refresh', status, page: 1, per_page: 1 })).items;
      if (job) throw new ServiceError('svc_job_already_running', `A coupons.refresh job is already ${job.status} (job ${job.id}).`, 409, { job });
    }
    const params = {
      ...(input.network !== undefined ? { network: input.network } : {}),
      ...(input.force ? { force: true } : {}),
      ...(input.full ? { full: true } : {}),
    };
    return this.deps.jobs.enqueue('coupons.refresh', params, actor, { unique: true });
  }

  /**
   * The link a member gets for a coupon: the advertiser's tracking link crediting `member`, with
   * the coupon's landing page as the deep link. A landing page the link cannot carry (off the
   * advertiser's domain, a network without deep links) falls back to the advertiser's home page
   * (`deeplink: false`) rather than no link. Refuses as `AdvertiserService.trackingLink` does, and
   * 409 svc_coupon_unavailable for a removed or expired coupon.
   */
  async link(id: number, member: string | number): Promise<CouponLink> {
    const coupon = await this.get(id);
    if (coupon.status === 'removed' || coupon.status === 'expired') {
      throw new ServiceError('svc_coupon_unavailable', `Coupon ${id} is ${coupon.status}: a member cannot use it.`, 409, { id, status: coupon.status });
    }
    const extra = { coupon: coupon.id, code: coupon.code };
    if (coupon.landing_url) {
      try {
        return {
          ...(await this.deps.advertisers.trackingLink(coupon.network, coupon.advertiser, { member, url: coupon.landing_url, coupon: coupon.id })),
          ...extra,
        };
      } catch (err) {
        if (!(err instanceof ServiceError) || !['svc_invalid_url', 'svc_deeplink_unsupported'].includes(err.code)) throw err;
      }
    }
    return { ...(await this.deps.advertisers.trackingLink(coupon.network, coupon.advertiser, { member, coupon: coupon.id })), ...extra };
  }

  /** One coupon with the network's latest values of its edited fields and its raw record; 404 svc_coupon_not_found. */
  async get(id: number, t?: Transaction): Promise<CouponDetail> {
    if (!Number.isSafeInteger(id) || id < 1) throw notFound(id);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${DETAIL_COLUMNS} FROM ${JOIN} WHERE c.id = ?`, [id], t);
    if (!row) throw notFound(id);
    const ai = t ? undefined : await this.deps.aiUsage.lastFor('coupon', [id]);
    return {
      ...shapeCoupon(row, this.deps.clock.now()),
      network_values: parseJson(row.network_values, {}),
      raw: parseJson<unknown>(row.raw, null),
      ai: ai?.get(id) ?? null,
    };
  }

  /** Filtered, ordered and paged; the status filter is computed from the dates at this instant. */
  async list(filters: CouponFilters): Promise<{ items: Coupon[]; total: number }> {
    const now = this.deps.clock.now();
    const where = couponWhere(filters, now);
    const order = orderClause(Object.fromEntries(COUPON_ORDERBY.map((f) => [f, `c.${f}`])), filters, 'c.id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT ${LIST_COLUMNS}, COALESCE(a.name_override, a.name) AS advertiser_name FROM ${JOIN} ${where.sql} ${order} ${pageClause(filters)}`,
        where.params,
      ),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM coupons c ${where.sql}`, where.params),
    ]);
    return { items: rows.map((r) => shapeCoupon(r, now)), total: toInt(count[0].n) };
  }

  /**
   * The views row of the list: coupons per status as of now (every status, 0 included) under the
   * list's other filters, in one query (a status is computed from the dates, so each is a sum).
   */
  async counts(filters: CouponCountFilters): Promise<StatusCounts> {
    const now = this.deps.clock.now();
    const where = couponWhere(filters, now);
    const conds = COUPON_STATUSES.map((st) => statusCondition(st, now));
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT COUNT(*) AS total, ${conds.map((c, i) => `SUM(CASE WHEN ${c.sql} THEN 1 ELSE 0 END) AS s${i}`).join(', ')} FROM coupons c ${where.sql}`,
      [...conds.flatMap((c) => c.params), ...where.params],
    );
    return {
      total: toInt(row.total),
      statuses: Object.fromEntries(COUPON_STATUSES.map((st, i) => [st, row[`s${i}`] === null ? 0 : toInt(row[`s${i}`])])),
    };
  }

  /**
   * A partial edit: each field given takes the value and becomes the administrator's (a refresh
   * keeps it); each field in `reset` goes back to the network's latest value. A value equal to
   * the current one changes nothing. 400 svc_invalid_coupon for a bad value or a field both set
   * and reset; 404 svc_coupon_not_found.
   */
  async update(id: number, patch: CouponPatch, options: { actor: string }): Promise<CouponDetail> {
    const reset = [...new Set(patch.reset ?? [])];
    for (const f of reset) {
      if (!(COUPON_FIELDS as readonly string[]).includes(f))
        throw new ServiceError('svc_invalid_coupon', `Invalid reset: ${String(f)} is not a coupon field.`, 400, {
          params: { reset: `unknown field ${String(f)}` },
        });
    }
    const values = new Map<CouponField, FieldValue>();
    for (const f of COUPON_FIELDS) {
      if (patch[f] === undefined) continue;
      if (reset.includes(f))
        throw new ServiceError('svc_invalid_coupon', `Invalid edit: ${f} is both set and reset.`, 400, { params: { reset: `${f} is also set` } });
      values.set(f, editValue(f, patch[f]));
    }
    const changed = await this.change(id, (state) => {
      const fields: CouponField[] = [];
      for (const f of reset) if (state.giveBack(f)) fields.push(f);
      for (const [f, v] of values) if (state.edit(f, v)) fields.push(f);
      return fields;
    });
    if (changed.fields.length) {
      this.deps.logger.info('coupons', 'Coupon edited', { id, fields: changed.fields, reset, actor: options.actor });
      this.deps.hooks.doAction(HOOKS.couponUpdated, changed.coupon, { actor: options.actor, fields: changed.fields, reason: 'edit' });
    }
    return changed.coupon;
  }

  /**
   * Stores an AI rewrite of the title and/or description: the text from before the first
   * rewrite is kept (once; a second rewrite keeps the first original) with who owned it, and the
   * fields are marked AI-written so a refresh keeps them. Runs in `t` when given (the caller's
   * usage record commits with it). `check` sees the title and description as stored, under the
   * row lock, and may refuse (a kept AI proposal refuses when they changed since it was made).
   * 400 svc_invalid_coupon, 404 svc_coupon_not_found.
   */
  async applyRewrite(
    id: number,
    text: { title?: string; description?: string | null },
    meta: RewriteMeta,
    t?: Transaction,
    check?: (current: { title: string; description: string | null }) => void,
  ): Promise<CouponDetail> {
    const values = new Map<AiField, FieldValue>();
    for (const f of AI_FIELDS) if (text[f] !== undefined) values.set(f, editValue(f, text[f]));
    if (!values.size)
      throw new ServiceError('svc_invalid_coupon', 'Invalid rewrite: give a title or a description.', 400, {
        params: { title: 'a rewrite needs a title or a description' },
      });
    const changed = await this.change(
      id,
      (state) => {
        check?.({ title: String(state.values.title ?? ''), description: state.values.description === null ? null : String(state.values.description) });
        for (const [f, v] of values) state.rewrite(f, v);
        return [...values.keys()];
      },
      t,
    );
    const { actor, ...rest } = meta;
    this.deps.logger.info('coupons', 'Coupon rewritten by AI', { id, fields: changed.fields, actor, model: meta.model ?? null });
    const fire = () => this.deps.hooks.doAction(HOOKS.couponUpdated, changed.coupon, { ...rest, actor, fields: changed.fields, reason: 'ai' });
    if (t) t.afterCommit(fire);
    else fire();
    return changed.coupon;
  }

  /**
   * Restores the text from before the AI rewrite: a field the network owned then goes back to
   * the network (its latest value), an administrator's text comes back as an edit. Whatever was
   * written over the AI text since is replaced: that is what revert asks for. 409
   * svc_nothing_to_revert when no field has an original; 404 svc_coupon_not_found.
   */
  async revert(id: number, options: { actor: string }): Promise<CouponDetail> {
    const changed = await this.change(id, (state) => {
      const fields = state.revertable();
      if (!fields.length) throw new ServiceError('svc_nothing_to_revert', `Coupon ${id} has no text from before an AI rewrite to restore.`, 409, { id });
      for (const f of fields) state.revert(f);
      return fields;
    });
    this.deps.logger.info('coupons', 'Coupon reverted to its text from before the AI rewrite', { id, fields: changed.fields, actor: options.actor });
    this.deps.hooks.doAction(HOOKS.couponUpdated, changed.coupon, { actor: options.actor, fields: changed.fields, reason: 'revert' });
    return changed.coupon;
  }

  /**
   * Runs `decide` on the coupon's field state in a transaction holding the row and stores what
   * it changed. Answers the coupon as stored and the fields `decide` reported.
   */
  private async change<F extends CouponField>(
    id: number,
    decide: (state: FieldState) => F[],
    outer?: Transaction,
  ): Promise<{ coupon: CouponDetail; fields: F[] }> {
    if (!Number.isSafeInteger(id) || id < 1) throw notFound(id);
    const { db, clock } = this.deps;
    const run = async (t: Transaction) => {
      const [row] = await db.select<Record<string, unknown>>(`SELECT * FROM coupons WHERE id = ?${db.forUpdate()}`, [id], t);
      if (!row) throw notFound(id);
      const state = new FieldState(row);
      const fields = decide(state);
      if (state.dirty.size) {
        const now = clock.now();
        const sets: string[] = [];
        const params: unknown[] = [];
        for (const f of state.dirty) sets.push(`${f} = ?`), params.push(toColumn(f, state.values[f]));
        const starts = state.values.starts_at ? new Date(state.values.starts_at as string) : null;
        const ends = state.values.ends_at ? new Date(state.values.ends_at as string) : null;
        const status = row.status === 'removed' ? 'removed' : statusAt(null, starts, ends, now);
        sets.push(
          'edited_fields = ?',
          'ai_fields = ?',
          'network_values = ?',
          'original_title = ?',
          'original_description = ?',
          'original_owners = ?',
          'status = ?',
          'updated_at = ?',
        );
        params.push(
          list(state.edited),
          list(state.ai),
          Object.keys(state.network).length ? JSON.stringify(state.network) : null,
          state.original.title,
          state.original.description,
          Object.keys(state.owners).length ? JSON.stringify(state.owners) : null,
          status,
          now,
        );
        await db.execute(`UPDATE coupons SET ${sets.join(', ')} WHERE id = ?`, [...params, id], t);
      }
      return { coupon: await this.get(id, t), fields };
    };
    return outer ? run(outer) : db.transaction(run);
  }
}

/** One coupon's fields and who owns each, as a transaction changes them. */
class FieldState {
  readonly values: Record<CouponField, FieldValue>;
  readonly edited: Set<CouponField>;
  readonly ai: Set<AiField>;
  readonly network: Partial<Record<CouponField, FieldValue>>;
  readonly owners: OriginalOwners;
  readonly original: Record<AiField, string | null>;
  readonly dirty = new Set<CouponField>();

  constructor(row: Record<string, unknown>) {
    this.values = Object.fromEntries(COUPON_FIELDS.map((f) => [f, fromColumn(f, row[f])])) as Record<CouponField, FieldValue>;
    this.edited = new Set(fieldList(row.edited_fields, COUPON_FIELDS));
    this.ai = new Set(fieldList(row.ai_fields, AI_FIELDS));
    const stored = parseJson<Record<string, unknown>>(row.network_values, {});
    this.network = {};
    for (const f of COUPON_FIELDS) if (stored && Object.hasOwn(stored, f)) this.network[f] = stored[f] as FieldValue;
    this.owners = originalOwners(row.original_owners);
    this.original = {
      title: row.original_title === null || row.original_title === undefined ? null : String(row.original_title),
      description: row.original_description === null || row.original_description === undefined ? null : String(row.original_description),
    };
  }

  private owned(f: CouponField): boolean {
    return this.edited.has(f) || this.ai.has(f as AiField);
  }

  private set(f: CouponField, v: FieldValue): void {
    if (sameValue(this.values[f], v)) return;
    this.values[f] = v;
    this.dirty.add(f);
  }

  /** The field's value while the network owns it is the network's: keep it before taking the field over. */
  private takeOver(f: CouponField): void {
    if (!this.owned(f)) this.network[f] = this.values[f];
  }

  /** An administrator's value; false when it is the value already there. */
  edit(f: CouponField, v: FieldValue): boolean {
    if (sameValue(this.values[f], v)) return false;
    this.takeOver(f);
    this.edited.add(f);
    this.ai.delete(f as AiField);
    this.set(f, v);
    this.dirty.add(f);
    return true;
  }

  /** Gives the field back to the network; false when the network owns it already. */
  giveBack(f: CouponField): boolean {
    if (!this.owned(f)) return false;
    if (Object.hasOwn(this.network, f)) this.set(f, this.network[f]!);
    delete this.network[f];
    this.edited.delete(f);
    this.ai.delete(f as AiField);
    if ((AI_FIELDS as readonly string[]).includes(f)) this.forgetOriginal(f as AiField);
    this.dirty.add(f);
    return true;
  }

  rewrite(f: AiField, v: FieldValue): void {
    if (!this.owners[f]) {
      this.owners[f] = this.edited.has(f) ? 'edited' : 'network';
      this.original[f] = this.values[f] as string | null;
    }
    this.takeOver(f);
    this.ai.add(f);
    this.edited.delete(f);
    this.set(f, v);
    this.dirty.add(f);
  }

  revertable(): AiField[] {
    return AI_FIELDS.filter((f) => this.owners[f]);
  }

  revert(f: AiField): void {
    if (this.owners[f] === 'edited') {
      this.set(f, this.original[f]);
      this.edited.add(f);
    } else {
      const latest = Object.hasOwn(this.network, f) ? this.network[f]! : this.original[f];
      this.set(f, f === 'title' && !latest ? (this.original[f] ?? '') : latest);
      delete this.network[f];
      this.edited.delete(f);
    }
    this.ai.delete(f);
    this.forgetOriginal(f);
    this.dirty.add(f);
  }

  private forgetOriginal(f: AiField): void {
    delete this.owners[f];
    this.original[f] = null;
  }
}
