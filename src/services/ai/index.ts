// AI content: a shop's description and page body, a coupon's title and description, one at a time
// or in a bulk job (bulk.ts). Each generation renders the task's prompt templates with the item's
// tags, asks the provider for structured output, sanitises it (HTML through the page sanitiser,
// text through the text one), validates it again after the `cashtrack.ai.result` filter, and saves
// it through the owners of the fields (advertisers, pages, coupons) together with its usage record.
// A dry run returns the proposal and saves nothing but the usage record (tokens were spent) and the
// proposal itself (proposals.ts), which a later request keeps without asking the provider again.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { isServiceError, ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import { AiProvider, badOutput, ProviderCallError, type ChatMessage, type OutputFormat, type StructuredAnswer, type Usage } from './provider.js';
import { aiJsonSchemas, aiOutputSchemas, type CouponOutput, type ShopOutput } from './outputs.js';
import type { AdvertiserDetail, AdvertiserService } from '../advertisers/index.js';
import type { Job, JobHandle, JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import { renderTemplate, sanitizeBody, sanitizeText } from '../pages/index.js';
import type { TemplateTags } from '../../config/template-tags.js';
import { runBulk, type BulkResult } from './bulk.js';
import { type AiBudget, type AiBudgetDay, countedTokens, estimateTokens, holdMs } from './budget.js';
import type { AiCalls, AiKind } from './calls.js';
import type { AiSettings, AiSettingsStore, AiSettingsView } from './settings.js';
import type { AiUsage } from './usage.js';
import type { FetchingGuard } from '../../outbound/index.js';
import { type AiProposals, fingerprint, staleProposal } from './proposals.js';

export { AiBudget, type AiBudgetDay } from './budget.js';
export { AiCalls, type AiKind } from './calls.js';
export { AiProposals, PROPOSAL_ID, PROPOSAL_TTL_MS } from './proposals.js';
export { AiSettingsStore, type AiSettingsView } from './settings.js';
export { AiUsage, type AiGeneration, type AiOverview, type AiOverviewBlock } from './usage.js';
export { couponSource } from './coupon-source.js';
export { shopPages } from './shop-pages.js';

/** The coupon fields a rewrite reads. */
export interface CouponForAi {
  id: number;
  network: string;
  advertiser: string;
  advertiser_name: string | null;
  code: string;
  title: string;
  description: string | null;
  terms: string | null;
  discount: { type: string; value: string | null; currency: string | null; text: string | null };
  starts_at: string | null;
  ends_at: string | null;
}

export interface CouponWalkFilters {
  network?: string;
  advertiser?: string;
  status?: string;
  type?: 'code' | 'deal';
}

/** What the AI service needs of the coupons (their service owns the table). */
export interface CouponSource {
  get(id: number): Promise<CouponForAi>;
  /** Stores the rewrite, keeping the original for revert; in `t` with the usage record. */
  applyRewrite(
    id: number,
    text: { title: string; description: string },
    meta: { actor: string; model: string | null; [key: string]: unknown },
    t?: Transaction,
    /** Runs on the coupon's text as stored, under its row lock, before the rewrite: throw to refuse it. */
    check?: (current: { title: string; description: string | null }) => void,
  ): Promise<unknown>;
  /** Coupons after `after` by id matching the filters, and whether their text is AI-written. */
  idsAfter(after: number, filters: CouponWalkFilters, limit: number): Promise<{ id: number; ai: boolean }[]>;
  count(filters: CouponWalkFilters): Promise<number>;
}

/** What the AI service needs of the shop pages (their service owns the table). */
export interface ShopPages {
  /** The shop's text an AI write replaces: the advertiser's description and its page's body (null without a page). */
  state(advertiserId: number): Promise<{ description: string | null; page_id: number | null; body: string | null }>;
  /** The advertiser's page, made as a draft from the default template when it has none. */
  ensurePage(advertiserId: number, actor: string): Promise<number>;
  /**
   * Writes the AI body of the page, keeping the shop's text from before (this body and
   * `before.description`) for revert; `before.check` runs on the page as stored, under its row
   * lock, and may refuse. In `t` when given.
   */
  saveBody(
    pageId: number,
    body: string,
    before: { description: string | null; check?: (current: { body: string }) => void },
    actor: string,
    t?: Transaction,
  ): Promise<{ page_id: number }>;
}

export interface AiServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  store: AiSettingsStore;
  /** The `ai_calls` writer (and the reads of the AI service's own runs). */
  calls: AiCalls;
  /** The dry runs' proposals, kept without asking the provider again. */
  proposals: AiProposals;
  /** The read model of `ai_calls` other domains show (last generations, the overview's block). */
  usage: AiUsage;
  /** The daily token budget: every call reserves on it first. */
  budget: AiBudget;
  advertisers: Pick<AdvertiserService, 'getById' | 'setDescription' | 'idsAfter' | 'count'>;
  pages: ShopPages;
  coupons: CouponSource;
  jobs: Pick<JobService, 'enqueue'>;
  /** The outbound guard every call to the provider goes through. */
  outbound: FetchingGuard;
}

/** How a generation went, as the routes and the CLI answer it. */
export interface GenerationUsage {
  model: string;
  tokens: Usage;
  format: OutputFormat;
  attempts: number;
  duration_ms: number;
  at: string;
}

export interface ShopGeneration {
  kind: 'shop';
  id: number;
  dry_run: boolean;
  saved: boolean;
  proposal: ShopOutput;
  page_id: number | null;
  generation: GenerationUsage;
  /** The stored proposal: made by a dry run (keep it with `proposal_id`), or the one this answer kept. */
  proposal_id: string | null;
  /** Until when a dry run's proposal can be kept (null otherwise). */
  expires_at: string | null;
}

export interface CouponGeneration {
  kind: 'coupon';
  id: number;
  dry_run: boolean;
  saved: boolean;
  proposal: CouponOutput;
  /** The coupon as stored after the rewrite (null on a dry run). */
  coupon: unknown;
  generation: GenerationUsage;
  /** The stored proposal: made by a dry run (keep it with `proposal_id`), or the one this answer kept. */
  proposal_id: string | null;
  /** Until when a dry run's proposal can be kept (null otherwise). */
  expires_at: string | null;
}

/** What a generation request asks: a dry run, a generation saved at once, or a dry run's proposal kept. */
export interface GenerateOptions {
  dry_run?: boolean;
  proposal_id?: string;
}

/** Where a generation runs: a request (no job) or a bulk job, with its provider and signal. */
export interface GenerationRun {
  provider?: AiProvider;
  settings?: AiSettings;
  signal?: AbortSignal;
  jobId?: number | null;
  /**
   * Runs the provider call (a bulk run's concurrency limit and token budget, for which `estimate`
   * is reserved); the rest of the work runs outside it.
   */
  slot?: (call: () => Promise<StructuredAnswer<unknown>>, estimate: number) => Promise<StructuredAnswer<unknown>>;
}

export interface BulkInput {
  kind: 'shops' | 'coupons';
  filter: { network?: string; advertiser?: string; status?: string; type?: 'code' | 'deal'; search?: string };
  overwrite: boolean;
}

const list = (v: string[] | null | undefined) => (v?.length ? v.join(', ') : '');

/** Generates shop content and rewrites coupons with the configured AI provider. */
export class AiService {
  /** Which providers (base URL and model) refused json_schema: shared by every provider this process builds. */
  private readonly formats = new Map<string, OutputFormat>();

  constructor(readonly deps: AiServiceDeps) {}

  /** The settings, with today's token spend against the daily budget. */
  async settings(): Promise<AiSettingsView & { today: AiBudgetDay }> {
    return this.withSpend(await this.deps.store.view());
  }

  async configure(values: Record<string, string | number | null>, actor: string): Promise<AiSettingsView & { today: AiBudgetDay }> {
    return this.withSpend(await this.deps.store.configure(values, actor));
  }

  private async withSpend(view: AiSettingsView): Promise<AiSettingsView & { today: AiBudgetDay }> {
    return { ...view, today: await this.deps.budget.today(view.daily_token_budget) };
  }

  /** A provider for the current settings, or 503 svc_ai_not_configured. */
  async provider(): Promise<{ provider: AiProvider; settings: AiSettings }> {
    const { settings, provider } = await this.deps.store.provider();
    return { provider: new AiProvider(provider, this.deps.outbound, this.formats), settings };
  }

  /**
   * Generates an advertiser's description and page body; saves both (the page created as a draft
   * when there is none) unless `dry_run`. 404 svc_advertiser_not_found, 503
   * svc_ai_not_configured, 502 svc_ai_provider_error or svc_ai_bad_output.
   */
  async generateShop(id: number, options: GenerateOptions, actor: string, run: GenerationRun = {}): Promise<ShopGeneration> {
    if (options.proposal_id !== undefined) return this.keepShop(id, options.proposal_id, actor);
    const { provider, settings } = run.provider && run.settings ? { provider: run.provider, settings: run.settings } : await this.provider();
    const shop = await this.deps.advertisers.getById(id);
    const dryRun = options.dry_run === true;
    // The page service makes no page for an inactive advertiser: refuse before spending tokens.
    if (!dryRun) assertPageable(shop);
    const tags = this.shopTags(shop, settings);
    const { value, usage, callId } = await this.generate<ShopOutput>('shop', id, settings, tags, actor, run, provider, dryRun, (raw) => {
      const out = { description: text(raw.description, sanitizeText), body: text(raw.body, sanitizeBody) };
      return checked('shop', out);
    });
    let pageId: number | null = null;
    let stored: { id: string; expires_at: string } | null = null;
    if (dryRun) {
      const state = await this.deps.pages.state(id);
      stored = await this.deps.proposals.store({
        kind: 'shop',
        item_id: id,
        output: value,
        generation: usage,
        base: fingerprint([state.description, state.body]),
        call_id: callId,
        actor,
      });
    } else {
      // The page service writes in transactions of its own: the body first, then the description
      // with the usage record, so a shop counts as AI-written only once both are stored.
      try {
        pageId = await this.deps.pages.ensurePage(id, actor);
        await this.deps.pages.saveBody(pageId, value.body, { description: shop.description ?? null }, actor);
      } catch (err) {
        if (isServiceError(err)) await this.fail('shop', id, err, usage, actor, run);
        throw err;
      }
      await this.save('shop', id, usage, actor, run, (t) => this.deps.advertisers.setDescription(id, value.description, actor, t));
    }
    this.generated('shop', id, usage, dryRun, run);
    return {
      kind: 'shop',
      id,
      dry_run: dryRun,
      saved: !dryRun,
      proposal: value,
      page_id: pageId,
      generation: usage,
      proposal_id: stored?.id ?? null,
      expires_at: stored?.expires_at ?? null,
    };
  }

  /**
   * Keeps a dry run's proposal for a shop: saves exactly its text (the page body, then the
   * description) as a generation does, without calling the provider. A proposal kept already
   * answers what its keep answered. 404 svc_ai_proposal_not_found, 410 svc_ai_proposal_expired,
   * 409 svc_ai_proposal_mismatch (another target), 409 svc_ai_proposal_stale (the description or
   * page body changed since), 409 svc_advertiser_inactive.
   */
  private async keepShop(id: number, proposalId: string, actor: string): Promise<ShopGeneration> {
    const first = await this.deps.proposals.find(proposalId, 'shop', id);
    if (first.kept_at) return first.answer as ShopGeneration;
    const shop = await this.deps.advertisers.getById(id);
    assertPageable(shop);
    const before = await this.deps.pages.state(id);
    if (fingerprint([before.description, before.body]) !== first.base) throw staleProposal('shop', id, proposalId);
    // A page made now (the shop had none) is made from the template: outside the keep's transaction, as a generation does.
    const pageId = before.page_id ?? (await this.deps.pages.ensurePage(id, actor));
    const value = first.output as ShopOutput;
    const usage = first.generation as unknown as GenerationUsage;
    let answer: ShopGeneration | null = null;
    let kept = false;
    await this.deps.db.transaction(async (t) => {
      const p = await this.deps.proposals.find(proposalId, 'shop', id, t);
      if (p.kept_at) {
        answer = p.answer as ShopGeneration;
        return;
      }
      const check =
        before.page_id === null
          ? undefined
          : (current: { body: string }) => {
              if (current.body !== before.body) throw staleProposal('shop', id, proposalId);
            };
      await this.deps.pages.saveBody(pageId, value.body, { description: before.description, check }, actor, t);
      await this.deps.advertisers.setDescription(id, value.description, actor, t);
      await this.keepCall('shop', id, p.call_id, usage, actor, t);
      answer = {
        kind: 'shop',
        id,
        dry_run: false,
        saved: true,
        proposal: value,
        page_id: pageId,
        generation: usage,
        proposal_id: proposalId,
        expires_at: null,
      };
      await this.deps.proposals.markKept(proposalId, actor, answer, t);
      kept = true;
    });
    if (kept) this.kept('shop', id, usage, proposalId, actor);
    return answer!;
  }

  /**
   * Rewrites a coupon's title and description; saves them through the coupons' `applyRewrite`
   * (the text from before is kept for revert) unless `dry_run`. 404 svc_coupon_not_found, 503
   * svc_ai_not_configured, 502 svc_ai_provider_error or svc_ai_bad_output.
   */
  async rewriteCoupon(id: number, options: GenerateOptions, actor: string, run: GenerationRun = {}): Promise<CouponGeneration> {
    if (options.proposal_id !== undefined) return this.keepCoupon(id, options.proposal_id, actor);
    const { provider, settings } = run.provider && run.settings ? { provider: run.provider, settings: run.settings } : await this.provider();
    const coupon = await this.deps.coupons.get(id);
    const tags = this.couponTags(coupon, settings);
    const dryRun = options.dry_run === true;
    const { value, usage, callId } = await this.generate<CouponOutput>('coupon', id, settings, tags, actor, run, provider, dryRun, (raw) =>
      checked('coupon', { title: text(raw.title, sanitizeText), description: text(raw.description, sanitizeText) }),
    );
    let stored: unknown = null;
    let proposal: { id: string; expires_at: string } | null = null;
    if (dryRun) {
      proposal = await this.deps.proposals.store({
        kind: 'coupon',
        item_id: id,
        output: value,
        generation: usage,
        base: fingerprint([coupon.title, coupon.description]),
        call_id: callId,
        actor,
      });
    } else {
      await this.save('coupon', id, usage, actor, run, async (t) => {
        stored = await this.deps.coupons.applyRewrite(id, value, { actor, model: usage.model, tokens: usage.tokens, job_id: run.jobId ?? null }, t);
      });
      // Read in the transaction, the coupon could not show the generation recorded after it.
      if (stored && typeof stored === 'object') stored = { ...stored, ai: { model: usage.model, tokens: usage.tokens, outcome: 'saved', at: usage.at } };
    }
    this.generated('coupon', id, usage, dryRun, run);
    return {
      kind: 'coupon',
      id,
      dry_run: dryRun,
      saved: !dryRun,
      proposal: value,
      coupon: stored,
      generation: usage,
      proposal_id: proposal?.id ?? null,
      expires_at: proposal?.expires_at ?? null,
    };
  }

  /**
   * Keeps a dry run's proposal for a coupon: saves exactly its title and description through the
   * coupons' `applyRewrite` (the text from before kept for revert, the hook, the log line), without
   * calling the provider; the dry run's usage record becomes the saved one. A proposal kept already
   * answers what its keep answered. 404 svc_ai_proposal_not_found, 410 svc_ai_proposal_expired,
   * 409 svc_ai_proposal_mismatch (another target), 409 svc_ai_proposal_stale (the title or
   * description changed since), 404 svc_coupon_not_found.
   */
  private async keepCoupon(id: number, proposalId: string, actor: string): Promise<CouponGeneration> {
    const first = await this.deps.proposals.find(proposalId, 'coupon', id);
    if (first.kept_at) return first.answer as CouponGeneration;
    const value = first.output as CouponOutput;
    const usage = first.generation as unknown as GenerationUsage;
    let answer: CouponGeneration | null = null;
    let kept = false;
    await this.deps.db.transaction(async (t) => {
      const p = await this.deps.proposals.find(proposalId, 'coupon', id, t);
      if (p.kept_at) {
        answer = p.answer as CouponGeneration;
        return;
      }
      const stored = await this.deps.coupons.applyRewrite(
        id,
        value,
        { actor, model: usage.model, tokens: usage.tokens, job_id: null, proposal_id: proposalId },
        t,
        (current) => {
          if (fingerprint([current.title, current.description]) !== p.base) throw staleProposal('coupon', id, proposalId);
        },
      );
      await this.keepCall('coupon', id, p.call_id, usage, actor, t);
      const coupon =
        stored && typeof stored === 'object' ? { ...stored, ai: { model: usage.model, tokens: usage.tokens, outcome: 'saved', at: usage.at } } : stored;
      answer = { kind: 'coupon', id, dry_run: false, saved: true, proposal: value, coupon, generation: usage, proposal_id: proposalId, expires_at: null };
      await this.deps.proposals.markKept(proposalId, actor, answer, t);
      kept = true;
    });
    if (kept) this.kept('coupon', id, usage, proposalId, actor);
    return answer!;
  }

  /** The dry run's usage record becomes the saved one (recorded anew, with no tokens, if it is gone). */
  private async keepCall(kind: AiKind, id: number, callId: number | null, usage: GenerationUsage, actor: string, t: Transaction): Promise<void> {
    if (callId !== null && (await this.deps.calls.markSaved(callId, actor, t))) return;
    await this.deps.calls.record(
      {
        kind,
        item_id: id,
        model: usage.model,
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        job_id: null,
        outcome: 'saved',
        attempts: 0,
        format: usage.format,
        duration_ms: 0,
        actor,
      },
      t,
    );
  }

  /** The log line and the hook of a kept proposal (after its transaction committed). */
  private kept(kind: AiKind, id: number, usage: GenerationUsage, proposalId: string, actor: string): void {
    this.deps.logger.write(
      kind === 'shop' ? 'info' : 'debug',
      'ai',
      kind === 'shop' ? 'Shop content kept from its AI proposal' : 'Coupon rewrite kept from its AI proposal',
      {
        id,
        model: usage.model,
        proposal_id: proposalId,
        actor,
      },
    );
    this.deps.hooks.doAction(HOOKS.aiGenerated, {
      kind,
      id,
      model: usage.model,
      tokens: usage.tokens,
      dry_run: false,
      saved: true,
      job_id: null,
      proposal_id: proposalId,
    });
  }

  /**
   * Starts an `ai.bulk` job (202): checks the provider first, so a site without one hears 503
   * svc_ai_not_configured now rather than from a failed job. 409 svc_job_already_running while
   * the same run is queued or running.
   */
  async startBulk(input: BulkInput, actor: string): Promise<Job> {
    const { settings } = await this.deps.store.provider();
    await this.deps.budget.assertLeft(settings.daily_token_budget);
    return this.deps.jobs.enqueue('ai.bulk', input, actor, { unique: true });
  }

  /** Runs an `ai.bulk` job (see bulk.ts). */
  runBulk(job: JobHandle<BulkInput>): Promise<BulkResult> {
    return runBulk(this, job);
  }

  /** The last generation of each coupon of `ids` (for the coupon answers). */
  lastCouponGenerations(ids: number[]) {
    return this.deps.usage.lastFor('coupon', ids);
  }

  /** The overview's AI block: calls and tokens over the window, and whether a provider is set. */
  overview(days: number) {
    return this.deps.usage.overview(days);
  }

  /** Asks, checks and filters one generation; records a failed one with what it spent. */
  private async generate<T extends ShopOutput | CouponOutput>(
    kind: AiKind,
    id: number,
    settings: AiSettings,
    tags: TemplateTags,
    actor: string,
    run: GenerationRun,
    provider: AiProvider,
    dryRun: boolean,
    clean: (raw: T) => T,
  ): Promise<{ value: T; usage: GenerationUsage; callId: number | null }> {
    const started = Date.now();
    const prompts = settings.prompts[kind];
    const rendered: ChatMessage[] = [
      { role: 'system', content: renderTemplate(prompts.system, tags) },
      { role: 'user', content: renderTemplate(prompts.user, tags) },
    ];
    const messages = validMessages(this.deps.hooks.applyFilters<ChatMessage[]>(HOOKS.aiPrompt, rendered, { kind, id, job_id: run.jobId ?? null }), rendered);
    const estimate = estimateTokens(messages, aiJsonSchemas[kind], settings.answer_token_estimate);
    let answer: StructuredAnswer<T>;
    try {
      // Reserved on the daily budget before the call (429 svc_ai_budget_exhausted, nothing sent), settled after it.
      const call = async () => {
        const held = await this.deps.budget.reserve(estimate, settings.daily_token_budget, holdMs(settings), run.jobId ?? null);
        let outcome: unknown;
        try {
          outcome = await provider.complete<T>({
            messages,
            name: kind,
            jsonSchema: aiJsonSchemas[kind],
            validate: aiOutputSchemas[kind] as never,
            signal: run.signal,
          });
          return outcome as StructuredAnswer<T>;
        } catch (err) {
          outcome = err;
          throw err;
        } finally {
          await this.deps.budget.settle(held, countedTokens(outcome, estimate)).catch((err: unknown) => {
            // The reservation still holds the estimate until it expires; the spend is lost to the count.
            this.deps.logger.warning('ai', 'AI token reservation not settled', {
              kind,
              id,
              error: err instanceof Error ? err.message.slice(0, 200) : String(err),
            });
          });
        }
      };
      answer = run.slot ? ((await run.slot(call, estimate)) as StructuredAnswer<T>) : await call();
    } catch (err) {
      if (err instanceof ProviderCallError) {
        await this.fail(
          kind,
          id,
          err.error,
          { model: err.trace.model, tokens: err.trace.usage, attempts: err.trace.attempts, format: err.trace.format, duration_ms: Date.now() - started },
          actor,
          run,
        );
        throw err.error;
      }
      throw err;
    }
    const usage: GenerationUsage = {
      model: answer.model,
      tokens: answer.usage,
      format: answer.format,
      attempts: answer.attempts,
      duration_ms: Date.now() - started,
      at: this.deps.clock.now().toISOString(),
    };
    try {
      const proposal = clean(answer.value);
      // An extension may change the result; what it returns is cleaned and checked again.
      const filtered = this.deps.hooks.applyFilters<T>(
        HOOKS.aiResult,
        { ...proposal },
        { kind, id, model: answer.model, dry_run: dryRun, job_id: run.jobId ?? null },
      );
      if (!filtered || typeof filtered !== 'object' || Array.isArray(filtered))
        throw badOutput('wrong_shape', 'the cashtrack.ai.result filter returned no object.');
      const value = filtered === proposal ? proposal : clean(filtered);
      let callId: number | null = null;
      if (dryRun)
        callId = await this.deps.calls.record({
          kind,
          item_id: id,
          model: usage.model,
          usage: usage.tokens,
          job_id: run.jobId ?? null,
          outcome: 'dry_run',
          attempts: usage.attempts,
          format: usage.format,
          duration_ms: usage.duration_ms,
          actor,
        });
      return { value, usage, callId };
    } catch (err) {
      if (isServiceError(err)) await this.fail(kind, id, err, usage, actor, run);
      throw err;
    }
  }

  private async save(
    kind: AiKind,
    id: number,
    usage: GenerationUsage,
    actor: string,
    run: GenerationRun,
    write: (t: Transaction) => Promise<void>,
  ): Promise<void> {
    await this.deps.db.transaction(async (t) => {
      await write(t);
      await this.deps.calls.record(
        {
          kind,
          item_id: id,
          model: usage.model,
          usage: usage.tokens,
          job_id: run.jobId ?? null,
          outcome: 'saved',
          attempts: usage.attempts,
          format: usage.format,
          duration_ms: usage.duration_ms,
          actor,
        },
        t,
      );
    });
    // The coupon service logs its rewrite at info; this line adds the cost.
    this.deps.logger.write(kind === 'shop' ? 'info' : 'debug', 'ai', kind === 'shop' ? 'Shop content generated' : 'Coupon rewritten', {
      id,
      model: usage.model,
      total_tokens: usage.tokens.total_tokens,
      job_id: run.jobId ?? null,
      actor,
    });
  }

  private async fail(kind: AiKind, id: number, err: ServiceError, usage: Omit<GenerationUsage, 'at'>, actor: string, run: GenerationRun): Promise<void> {
    const reason = typeof err.data.reason === 'string' ? err.data.reason : null;
    await this.deps.calls.record({
      kind,
      item_id: id,
      model: usage.model,
      usage: usage.tokens,
      job_id: run.jobId ?? null,
      outcome: 'failed',
      error_code: err.code,
      reason,
      attempts: usage.attempts,
      format: usage.format,
      duration_ms: usage.duration_ms,
      actor,
    });
    this.deps.logger.warning('ai', 'AI generation failed', { kind, id, code: err.code, reason, message: err.message.slice(0, 300), job_id: run.jobId ?? null });
  }

  private generated(kind: AiKind, id: number, usage: GenerationUsage, dryRun: boolean, run: GenerationRun): void {
    this.deps.hooks.doAction(HOOKS.aiGenerated, {
      kind,
      id,
      model: usage.model,
      tokens: usage.tokens,
      dry_run: dryRun,
      saved: !dryRun,
      job_id: run.jobId ?? null,
    });
  }

  private shopTags(a: AdvertiserDetail, settings: AiSettings): TemplateTags {
    const rule = a.cashback_rule as unknown as { type?: string; value?: string; currency?: string | null } | null;
    const cashback = rule?.type ? (rule.type === 'flat' ? `${rule.value} ${rule.currency ?? ''}`.trim() : `${rule.value}%`) : '';
    return {
      NAME: a.name,
      DOMAIN: a.domain,
      URL: a.site_url,
      NETWORK: a.module,
      DESCRIPTION: a.description,
      LOGO: a.local_logo ?? a.logo_url,
      CASHBACK: cashback,
      LANGUAGE: settings.language,
      CATEGORIES: list(a.categories),
      COUNTRIES: list(a.countries),
    };
  }

  private couponTags(c: CouponForAi, settings: AiSettings): TemplateTags {
    const d = c.discount;
    return {
      NAME: c.advertiser_name ?? c.advertiser,
      NETWORK: c.network,
      LANGUAGE: settings.language,
      COUPON_TITLE: c.title,
      COUPON_DESCRIPTION: c.description,
      COUPON_CODE: c.code || 'none (a deal)',
      COUPON_DISCOUNT: d.text ?? (d.value ? `${d.value}${d.type === 'percent' ? '%' : d.currency ? ` ${d.currency}` : ''}` : d.type),
      COUPON_STARTS: c.starts_at ?? '',
      COUPON_ENDS: c.ends_at ?? 'open-ended',
      COUPON_TERMS: c.terms,
    };
  }
}

/** A field through its sanitiser; anything but text is left for the schema to refuse. */
function text(value: unknown, sanitize: (s: string) => string): string {
  return typeof value === 'string' ? sanitize(value) : (value as string);
}

/** The output after sanitising, checked again: text that was only markup is empty now. */
function checked<T>(kind: AiKind, value: T): T {
  const { value: out, error } = aiOutputSchemas[kind].validate(value, {
    abortEarly: false,
    convert: true,
    stripUnknown: true,
    errors: { wrap: { label: false } },
  });
  if (error) {
    // '' and null are refused as invalid by the routes' schemas: nothing is left of the text.
    const empty = error.details.some((d) => d.type === 'string.empty' || d.type === 'any.required' || d.type === 'any.invalid');
    throw badOutput(
      empty ? 'empty' : 'wrong_shape',
      `${error.details
        .map((d) => d.message)
        .join('; ')
        .slice(0, 300)} (after removing unsafe markup).`,
      { fields: [...new Set(error.details.map((d) => d.path.join('.')))] },
    );
  }
  return out as T;
}

/** A prompt filter must answer messages; anything else keeps the rendered prompt (and is logged by the hook bus as a no-op). */
function validMessages(value: unknown, fallback: ChatMessage[]): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) return fallback;
  const ok = value.every(
    (m) => m && typeof m === 'object' && ['system', 'user', 'assistant'].includes((m as ChatMessage).role) && typeof (m as ChatMessage).content === 'string',
  );
  return ok ? (value as ChatMessage[]) : fallback;
}

/** 409 svc_advertiser_inactive: the page service makes no page for an inactive advertiser. */
function assertPageable(shop: AdvertiserDetail): void {
  if (shop.page_id === null && shop.status === 'inactive') {
    throw new ServiceError(
      'svc_advertiser_inactive',
      `${shop.module}/${shop.advertiser} is inactive and has no page: the network no longer lists it, so a page would send members nowhere.`,
      409,
      { module: shop.module, advertiser: shop.advertiser },
    );
  }
}
