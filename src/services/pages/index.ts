// Shop pages: content the service owns, one page per advertiser, made from a configured template
// (singly, or for every active advertiser without one by the `pages.bulk` job) and edited by
// administrators. Every body passes `sanitizeBody` before it is stored; every slug is unique (the
// unique index decides races: a loser allocates again). A page and its advertiser's `page_id`
// are written in one transaction, so a failure leaves neither.
import type { Clock } from '../../clock.js';
import type { Config, PageTemplate } from '../../config/index.js';
import { Database, sleep, type Transaction } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countByStatus, orderClause, pageClause, type StatusCounts } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import { isServiceError, ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { AdvertiserService, PageSource } from '../advertisers/index.js';
import type { CashbackRuleService } from '../cashback/index.js';
import type { Job, JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import { errorText, PageDrafts, type CouponCounter, type Draft } from './drafts.js';
import {
  cutText,
  invalidPage,
  MAX_EXCERPT,
  MAX_TITLE,
  PAGE_COLUMNS,
  PAGE_ORDERBY,
  PAGE_STATUSES,
  pageExists,
  pageNotFound,
  pageWhere,
  publicPage,
  shapePage,
  type Page,
  type PageCountFilters,
  type PageFilters,
  type PageRow,
  type PageStatus,
} from './rows.js';
import { sanitizeBody, sanitizeText } from './sanitize.js';
import { slugOf, uniqueSlugs } from './slugs.js';
import type { WebhookEvents } from '../webhooks/index.js';

export * from './rows.js';
export type { CouponCounter } from './drafts.js';
// The AI domain renders its prompts and checks its output as pages do.
export { sanitizeBody, sanitizeText } from './sanitize.js';
export { renderTemplate } from './templates.js';

export interface PageServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  /** Page changes are written to the webhook outbox in their transaction; the hooks fire after commit. */
  events: WebhookEvents;
  advertisers: AdvertiserService;
  cashback: CashbackRuleService;
  networks: Pick<NetworkService, 'module'>;
  jobs: Pick<JobService, 'enqueue' | 'list' | 'cancelActiveOfType'>;
  config: Config['pages'];
  /** The site currency (a flat cashback rule without one is in it). */
  currency: string;
  /** The active coupons per advertiser (`%COUPONS_COUNT%`): the coupons domain's read model. */
  couponCounts: CouponCounter;
}

/** How a page is made: its status and template (defaults from the configuration). */
export interface MakeOptions {
  status?: PageStatus;
  template?: string;
}

/** What the bulk job's parameters say. */
export interface BulkInput extends MakeOptions {
  network?: string;
}

/** The outcome of one batch of the bulk job. */
export interface BatchOutcome {
  created: number;
  /** Advertisers that got a page meanwhile (made singly while the job ran). */
  skipped: number;
  failed: { module: string; advertiser: string; error: string }[];
}

const INSERT_COLUMNS = [
  'advertiser_id',
  'module',
  'advertiser',
  'title',
  'slug',
  'body',
  'excerpt',
  'status',
  'template',
  'author',
  'created_at',
  'updated_at',
  'published_at',
];
/**
 * Allocation rounds before a slug race is given up as contention: each round one of the racers
 * for a slug wins, so this many shops of one name can be made at the same moment.
 */
const ATTEMPTS = 16;

/** A short random pause after a lost race, so the racers do not meet again at once. */
const backoff = (attempt: number) => sleep(Math.floor(Math.random() * 10 * Math.min(attempt + 1, 5)));

/** Makes, lists, edits and deletes shop pages, and starts and stops the bulk job. */
export class PageService {
  private readonly drafts: PageDrafts;

  constructor(private readonly deps: PageServiceDeps) {
    this.drafts = new PageDrafts(deps);
  }

  /** The template names, default first. */
  templates(): string[] {
    const names = Object.keys(this.deps.config.templates);
    return [this.deps.config.default_template, ...names.filter((n) => n !== this.deps.config.default_template)];
  }

  private template(name: string | undefined): { name: string; template: PageTemplate } {
    const chosen = name ?? this.deps.config.default_template;
    const template = Object.hasOwn(this.deps.config.templates, chosen) ? this.deps.config.templates[chosen] : undefined;
    if (!template)
      throw invalidPage('template', `There is no page template "${String(chosen).slice(0, 64)}" (templates: ${this.templates().join(', ')}).`, {
        templates: this.templates(),
      });
    return { name: chosen, template };
  }

  /**
   * Makes the advertiser's page from a template. 404 svc_advertiser_not_found; 409 svc_page_exists
   * (naming the page) when it has one; 409 svc_advertiser_inactive; 400 svc_invalid_page for an
   * unknown template.
   */
  async create(module: string, advertiser: string, options: MakeOptions, actor: string): Promise<Page> {
    const template = this.template(options.template);
    const source = await this.deps.advertisers.pageSource(module, advertiser);
    if (source.page_id !== null) throw pageExists(await this.byAdvertiser(source.id), source);
    if (source.status === 'inactive') {
      throw new ServiceError(
        'svc_advertiser_inactive',
        `${module}/${advertiser} is inactive: the network no longer lists it, so a page would send members nowhere.`,
        409,
        { module, advertiser },
      );
    }
    const { drafts, failed } = await this.drafts.draft([source], template, options.status ?? this.deps.config.default_status);
    if (failed.length) throw failed[0].error;
    const page = await this.insertOne(drafts[0], actor);
    this.deps.logger.info('pages', 'Page created', { page_id: page.id, module, advertiser, slug: page.slug, status: page.status, actor });
    return publicPage(page);
  }

  /**
   * One batch of the bulk job: a page for each advertiser, in one transaction when nothing races
   * it, else one by one. A failure of one advertiser is counted, not thrown.
   */
  async createBatch(sources: PageSource[], options: MakeOptions, actor: string): Promise<BatchOutcome> {
    const outcome: BatchOutcome = { created: 0, skipped: 0, failed: [] };
    const { drafts, failed } = await this.drafts.draft(sources, this.template(options.template), options.status ?? this.deps.config.default_status);
    for (const f of failed) outcome.failed.push({ module: f.source.module, advertiser: f.source.advertiser, error: errorText(f.error) });
    if (drafts.length === 0) return outcome;
    try {
      const slugs = await uniqueSlugs(
        this.deps.db,
        drafts.map((d) => d.base),
      );
      await this.insert(drafts, slugs, actor);
      outcome.created += drafts.length;
      return outcome;
    } catch (err) {
      if (!this.isRace(err)) throw err;
    }
    for (const d of drafts) {
      try {
        await this.insertOne(d, actor);
        outcome.created++;
      } catch (err) {
        if (isServiceError(err) && err.code === 'svc_page_exists') outcome.skipped++;
        else outcome.failed.push({ module: d.source.module, advertiser: d.source.advertiser, error: errorText(err) });
      }
    }
    return outcome;
  }

  private isRace(err: unknown): boolean {
    return isUniqueViolation(err) || (isServiceError(err) && err.code === 'svc_page_exists');
  }

  /** Inserts drafts with these slugs and links them to their advertisers, in one transaction. */
  private async insert(drafts: Draft[], slugs: string[], actor: string): Promise<PageRow[]> {
    const { db, clock, advertisers } = this.deps;
    const now = clock.now();
    const author = actor.slice(0, 64);
    return db.transaction(async (t) => {
      const values = drafts.map((d, i) => [
        d.source.id,
        d.source.module,
        d.source.advertiser,
        d.title,
        slugs[i],
        d.body,
        d.excerpt,
        d.status,
        d.template,
        author,
        now,
        now,
        d.status === 'publish' ? now : null,
      ]);
      const ids = await db.insertMany('pages', INSERT_COLUMNS, values, t);
      await advertisers.linkPages(
        drafts.map((d, i) => ({ advertiserId: d.source.id, pageId: ids[i] })),
        t,
      );
      const pages = values.map((v, i) =>
        shapePage(Object.fromEntries([['id', ids[i]], ...INSERT_COLUMNS.map((c, k) => [c, v[k]])]), this.deps.config.link_template),
      );
      await this.deps.events.emitMany(
        t,
        pages.flatMap((page) => this.created(page, actor)),
      );
      return pages;
    });
  }

  /** The events of a new page: created, and published when it was made so. */
  private created(page: PageRow, actor: string): [string, ...unknown[]][] {
    const shown = publicPage(page);
    const events: [string, ...unknown[]][] = [[HOOKS.pageCreated, shown, { actor }]];
    if (page.status === 'publish') events.push([HOOKS.pagePublished, shown, { actor }]);
    return events;
  }

  /** Inserts one draft, allocating its slug again after losing a race for it. */
  private async insertOne(draft: Draft, actor: string): Promise<PageRow> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const [slug] = await uniqueSlugs(this.deps.db, [draft.base]);
      try {
        const [page] = await this.insert([draft], [slug], actor);
        return page;
      } catch (err) {
        if (!this.isRace(err)) throw err;
        const existing = await this.byAdvertiser(draft.source.id);
        if (existing) throw pageExists(existing, draft.source);
        const now = await this.deps.advertisers.pageSource(draft.source.module, draft.source.advertiser);
        if (now.page_id !== null) throw pageExists(null, draft.source);
        await backoff(attempt);
      }
    }
    throw new ServiceError(
      'svc_database_busy',
      'Pages with this slug are being made at this moment. Retry shortly.',
      503,
      { retry_after: 1 },
      { 'Retry-After': '1' },
    );
  }

  private async byAdvertiser(advertiserId: number): Promise<PageRow | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${PAGE_COLUMNS} FROM pages WHERE advertiser_id = ?`, [advertiserId]);
    return row ? shapePage(row, this.deps.config.link_template) : null;
  }

  private async read(id: number, t?: Transaction, lock = false): Promise<PageRow> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${PAGE_COLUMNS} FROM pages WHERE id = ?${lock ? this.deps.db.forUpdate() : ''}`,
      [id],
      t,
    );
    if (!row) throw pageNotFound(id);
    return shapePage(row, this.deps.config.link_template);
  }

  /** One page; 404 svc_page_not_found. */
  async get(id: number): Promise<Page> {
    return publicPage(await this.read(id));
  }

  /** Filtered and paged, newest first by default; `search` matches the start of the title or the slug. */
  async list(filters: PageFilters): Promise<{ items: Page[]; total: number }> {
    const where = pageWhere(filters);
    const order = orderClause(PAGE_ORDERBY, filters, 'id', { orderby: 'date', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${PAGE_COLUMNS} FROM pages ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM pages ${where.sql}`, where.params),
    ]);
    return { items: rows.map((r) => publicPage(shapePage(r, this.deps.config.link_template))), total: toInt(count[0].n) };
  }

  /** The views row of the list: pages per status (every status, 0 included) under the list's other filters. */
  counts(filters: PageCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'pages', 'status', pageWhere(filters), PAGE_STATUSES);
  }

  /** Typeahead: pages whose title or slug starts with `search`, by title: `{id, label}`, and how many there are. */
  async lookup(search: string, page = { page: 1, per_page: 20 }): Promise<{ items: { id: number; label: string }[]; total: number }> {
    const like = Database.likePrefix(search.trim());
    const where = "WHERE title LIKE ? ESCAPE '!' OR slug LIKE ? ESCAPE '!'";
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT id, title, slug FROM pages ${where} ORDER BY title, id LIMIT ${page.per_page} OFFSET ${(page.page - 1) * page.per_page}`,
        [like, like],
      ),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM pages ${where}`, [like, like]),
    ]);
    return { items: rows.map((r) => ({ id: toInt(r.id), label: `${String(r.title)} (${String(r.slug)})` })), total: toInt(count[0].n) };
  }

  /**
   * Changes what is given: a title (plain text), a slug (made a slug, and unique with a suffix as
   * on creation), a body (sanitised), an excerpt, a status. 404 svc_page_not_found; 400
   * svc_invalid_page for a title or slug that is empty once cleaned.
   */
  async update(id: number, patch: { title?: string; slug?: string; body?: string; excerpt?: string; status?: PageStatus }, actor: string): Promise<Page> {
    const set: Record<string, unknown> = {};
    if (patch.title !== undefined) {
      const title = cutText(sanitizeText(patch.title), MAX_TITLE);
      if (!title) throw invalidPage('title', 'The title is empty once markup is removed.');
      set.title = title;
    }
    const base = patch.slug === undefined ? undefined : slugOf(patch.slug);
    if (base === '') throw invalidPage('slug', 'The slug has no letters or digits a URL can carry.');
    if (patch.body !== undefined) set.body = sanitizeBody(patch.body);
    if (patch.excerpt !== undefined) set.excerpt = cutText(sanitizeText(patch.excerpt), MAX_EXCERPT);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (base !== undefined) [set.slug] = await uniqueSlugs(this.deps.db, [base], { exceptPage: id });
      try {
        return await this.applyUpdate(id, set, patch.status, actor);
      } catch (err) {
        if (base === undefined || !isUniqueViolation(err)) throw err;
        await backoff(attempt);
      }
    }
    throw new ServiceError(
      'svc_database_busy',
      'Pages with this slug are being changed at this moment. Retry shortly.',
      503,
      { retry_after: 1 },
      { 'Retry-After': '1' },
    );
  }

  /**
   * Writes an AI-written body, in `t` when given (the AI service's keep commits with it). The
   * shop's text from before the first AI write (this body and `description`, the advertiser's
   * description the caller is about to replace) is kept for `revert` unless one is kept already:
   * a second AI write keeps the first original, as for coupons. 404 svc_page_not_found.
   */
  async writeAiBody(
    id: number,
    body: string,
    before: { description: string | null; check?: (current: Page) => void },
    actor: string,
    t?: Transaction,
  ): Promise<Page> {
    return this.applyUpdate(id, { body: sanitizeBody(body) }, undefined, actor, t, (current) => {
      before.check?.(publicPage(current));
      return current.original ? {} : { ai_original: JSON.stringify({ body: current.body, description: before.description }) };
    });
  }

  /**
   * Restores the shop's text from before the AI wrote it: the page body and the advertiser's
   * description, in one transaction; whatever was written over the AI text since is replaced (that
   * is what revert asks for, as for coupons). 409 svc_nothing_to_revert when the AI has not
   * written over this page since it was made or last reverted; 404 svc_page_not_found.
   */
  async revert(id: number, actor: string): Promise<Page> {
    const { db, clock, advertisers } = this.deps;
    const page = await db.transaction(async (t) => {
      const current = await this.read(id, t, true);
      const original = current.original;
      if (!original) throw new ServiceError('svc_nothing_to_revert', `Page ${id} has no text from before an AI write to restore.`, 409, { id, kind: 'page' });
      await db.execute('UPDATE pages SET body = ?, ai_original = NULL, updated_at = ? WHERE id = ?', [original.body, clock.now(), id], t);
      await advertisers.setDescription(current.advertiser_id, original.description, actor, t);
      return this.read(id, t);
    });
    this.deps.logger.info('pages', 'Page reverted to its text from before the AI wrote it', { page_id: id, actor });
    return publicPage(page);
  }

  private async applyUpdate(
    id: number,
    set: Record<string, unknown>,
    status: PageStatus | undefined,
    actor: string,
    outer?: Transaction,
    extra?: (current: PageRow) => Record<string, unknown>,
  ): Promise<Page> {
    const { db, clock } = this.deps;
    const run = async (t: Transaction) => {
      const current = await this.read(id, t, true);
      const changes: Record<string, unknown> = { ...set, ...extra?.(current) };
      const publishing = status === 'publish' && current.status !== 'publish';
      if (status !== undefined) changes.status = status;
      if (publishing && current.published_at === null) changes.published_at = clock.now();
      changes.updated_at = clock.now();
      const columns = Object.keys(changes);
      await db.execute(`UPDATE pages SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => changes[c]), id], t);
      const updated = await this.read(id, t);
      if (publishing) await this.deps.events.emit(t, HOOKS.pagePublished, publicPage(updated), { actor });
      return updated;
    };
    const page = await (outer ? run(outer) : db.transaction(run));
    this.deps.logger.info('pages', 'Page updated', { page_id: id, fields: Object.keys(set).concat(status === undefined ? [] : ['status']), actor });
    return publicPage(page);
  }

  /** Deletes a page (its advertiser can have a new one). 404 svc_page_not_found. */
  async remove(id: number, actor: string): Promise<{ deleted: true; previous: Page }> {
    const { db, advertisers } = this.deps;
    const previous = await db.transaction(async (t) => {
      const page = await this.read(id, t, true);
      await db.execute('DELETE FROM pages WHERE id = ?', [id], t);
      await advertisers.unlinkPage(page.advertiser_id, id, t);
      const shown = publicPage(page);
      await this.deps.events.emit(t, HOOKS.pageDeleted, shown, { actor });
      return shown;
    });
    this.deps.logger.info('pages', 'Page deleted', { page_id: id, module: previous.module, advertiser: previous.advertiser, slug: previous.slug, actor });
    return { deleted: true, previous };
  }

  /** The bulk run: the latest `pages.bulk` job (null: never run) and how many active advertisers have a page. */
  async bulkState(): Promise<{ job: Job | null; advertisers: { active: number; with_page: number; without_page: number } }> {
    const [job, advertisers] = await Promise.all([this.latestBulk(), this.deps.advertisers.pageCounts()]);
    return { job, advertisers };
  }

  private async latestBulk(): Promise<Job | null> {
    return (await this.deps.jobs.list({ type: 'pages.bulk', page: 1, per_page: 1 })).items[0] ?? null;
  }

  /**
   * Starts the `pages.bulk` job. 400 svc_invalid_page for an unknown template; 409
   * svc_job_already_running while one runs (whatever its filters: two would race over the same
   * advertisers).
   */
  async startBulk(input: BulkInput, actor: string): Promise<Job> {
    this.template(input.template);
    const params: Record<string, unknown> = {};
    if (input.network !== undefined) params.network = input.network;
    if (input.status !== undefined) params.status = input.status;
    if (input.template !== undefined) params.template = input.template;
    return this.deps.jobs.enqueue('pages.bulk', params, actor, { unique: 'type' });
  }

  /** Cancels the running `pages.bulk` job; 409 svc_job_not_running when none is queued or running. */
  cancelBulk(actor: string): Promise<Job> {
    return this.deps.jobs.cancelActiveOfType('pages.bulk', actor);
  }
}
