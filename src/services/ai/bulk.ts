// The `ai.bulk` run: generates for every shop or coupon matching a filter, `concurrency` calls at
// a time, skipping items whose text the AI already wrote unless `overwrite`. Twice as many workers
// as calls take items, so an item's reads and writes overlap other items' calls and the provider
// is kept at `concurrency` calls in flight. It walks the items by
// id (a keyset, so what it writes cannot shift what it reads next) and checkpoints the id below
// which everything is finished, with its counts; a resumed run starts there. It stops taking
// items once the run's token budget is spent, or today's (the result says which): each call
// reserves its estimate on the run's budget before it starts and settles it with what it counted
// after (budget.ts), so calls in flight at once cannot all pass the check. It reports each item's failure
// (counted, the first ones listed) without failing the run, and stops at once on a cancel: the
// job's signal aborts the calls in flight and any backoff.
import { setMaxListeners } from 'node:events';
import { isServiceError } from '../../errors.js';
import type { JobHandle } from '../jobs/index.js';
import { countedTokens } from './budget.js';
import { ProviderCallError, type StructuredAnswer, type Usage } from './provider.js';
import type { AiService, BulkInput } from './index.js';

/** Failures listed in a run's result (all are counted). */
export const MAX_LISTED_FAILURES = 50;
const PAGE = 200;
/** A checkpoint at most this often (and at the end): each is a database write. */
const CHECKPOINT_MS = 1000;

export interface BulkFailure {
  id: number;
  code: string;
  reason: string | null;
  message: string;
}

export interface BulkCheckpoint {
  /** Every item up to this id is finished. */
  after: number;
  saved: number;
  skipped: number;
  failed: number;
  failures: BulkFailure[];
  tokens: Usage;
  /** Tokens counted against the run's budget (an estimate for answers without reported usage). */
  counted?: number;
}

export interface BulkResult extends Record<string, unknown> {
  kind: BulkInput['kind'];
  saved: number;
  skipped: number;
  failed: number;
  failures: BulkFailure[];
  /** Why the run stopped before the end (`token_budget`: the run's; `daily_token_budget`: today's), or null when it went through. */
  stopped: 'token_budget' | 'daily_token_budget' | null;
  token_budget: number;
  /** Tokens counted against `token_budget`: the reported usage, an estimate for answers without it. */
  counted_tokens: number;
  /** Every generation of this job (resumed attempts included), from the usage records. */
  usage: { calls: number; tokens: Usage; models: string[] };
}

/** The run's token budget cannot take an item's call. */
class BudgetSpent extends Error {}

/** At most `n` at once; a wait ends at once (rejecting) when `signal` aborts. */
function limiter(n: number, signal: AbortSignal) {
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = (): Promise<void> => {
    if (active < n) {
      active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', stop);
        resolve();
      };
      const stop = () => {
        const i = waiting.indexOf(go);
        if (i >= 0) waiting.splice(i, 1);
        reject(signal.reason);
      };
      waiting.push(go);
      signal.addEventListener('abort', stop, { once: true });
    });
  };
  // A freed place goes straight to the next waiter.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return { acquire, release };
}

const addTokens = (a: Usage, b: Usage): Usage => ({
  prompt_tokens: a.prompt_tokens + b.prompt_tokens,
  completion_tokens: a.completion_tokens + b.completion_tokens,
  total_tokens: a.total_tokens + b.total_tokens,
});

/** Runs one bulk job to its end, its token budget, or its stop. */
export async function runBulk(ai: AiService, job: JobHandle<BulkInput>): Promise<BulkResult> {
  const { kind, filter, overwrite } = job.params;
  const { provider, settings } = await ai.provider();
  const budget = settings.token_budget;
  const saved = job.checkpoint as BulkCheckpoint | null;
  const state: BulkCheckpoint = saved
    ? { ...saved, failures: [...saved.failures], tokens: { ...saved.tokens }, counted: saved.counted ?? saved.tokens.total_tokens }
    : { after: 0, saved: 0, skipped: 0, failed: 0, failures: [], tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, counted: 0 };
  /** Tokens counted so far, and the estimates the calls in flight hold. */
  let counted = state.counted ?? 0;
  let reserved = 0;
  /** Wakes the calls waiting for one in flight to settle. */
  let settled: (() => void)[] = [];
  const deps = ai.deps;
  const shopFilter = { network: filter.network, status: filter.status as 'active' | 'inactive' | undefined, search: filter.search };
  const couponFilter = { network: filter.network, advertiser: filter.advertiser, status: filter.status, type: filter.type };
  if (!saved) job.setTotal(kind === 'shops' ? await deps.advertisers.count(shopFilter) : await deps.coupons.count(couponFilter));

  /** The next page of items after `after`, with whether each is AI-written already. */
  const page = async (after: number): Promise<{ id: number; ai: boolean }[]> => {
    if (kind === 'coupons') return deps.coupons.idsAfter(after, couponFilter, PAGE);
    const ids = await deps.advertisers.idsAfter(after, shopFilter, PAGE);
    const written = overwrite ? new Set<number>() : await deps.calls.saved('shop', ids);
    return ids.map((id) => ({ id, ai: written.has(id) }));
  };

  let queue: { id: number; ai: boolean }[] = [];
  let cursor = state.after;
  let exhausted = false;
  let stopped: BulkResult['stopped'] = null;
  let fatal: unknown = null;
  const inFlight = new Set<number>();
  let refill: Promise<void> | null = null;
  let lastCheckpoint = Date.now();

  /** Items taken but left undone at the budget: the checkpoint stays below them. */
  let lowestLeft = Infinity;
  /** The id below which everything is finished: just under the lowest in flight or left, or the last taken. */
  const finishedUpTo = () => Math.min(cursor, lowestLeft - 1, inFlight.size ? Math.min(...inFlight) - 1 : Infinity);

  const slots = limiter(settings.concurrency, job.signal);
  /**
   * The provider call of an item: within the concurrency and the run's budget (its estimate
   * reserved first), counting every token it spent (refused answers too). While the calls in
   * flight hold what the budget would need, it waits for them to settle: they may spend less.
   */
  const slot = async (call: () => Promise<StructuredAnswer<unknown>>, estimate: number): Promise<StructuredAnswer<unknown>> => {
    await slots.acquire();
    try {
      while (budget > 0 && counted + reserved + estimate > budget) {
        if (reserved === 0 || job.signal.aborted) throw new BudgetSpent();
        await new Promise<void>((resolve) => settled.push(resolve));
      }
      reserved += estimate;
      let outcome: unknown;
      try {
        outcome = await call();
        state.tokens = addTokens(state.tokens, (outcome as StructuredAnswer<unknown>).usage);
        return outcome as StructuredAnswer<unknown>;
      } catch (err) {
        outcome = err;
        if (err instanceof ProviderCallError) state.tokens = addTokens(state.tokens, err.trace.usage);
        throw err;
      } finally {
        reserved -= estimate;
        counted += countedTokens(outcome, estimate);
        state.counted = counted;
        const waiting = settled;
        settled = [];
        for (const wake of waiting) wake();
      }
    } finally {
      slots.release();
    }
  };
  const next = async (): Promise<number | null> => {
    for (;;) {
      if (fatal || job.signal.aborted) return null;
      const item = queue.shift();
      if (!item) {
        if (exhausted) return null;
        // One page read at a time; the other workers wait for it.
        refill ??= page(cursor).then((items) => {
          queue = items;
          if (items.length < PAGE) exhausted = true;
          refill = null;
        });
        await refill;
        continue;
      }
      if (item.ai && !overwrite) {
        cursor = item.id;
        state.skipped++;
        job.progress({ done: 1 });
        continue;
      }
      // The budget stops the run only when there is something left to spend it on.
      if (stopped || (budget > 0 && counted >= budget)) {
        queue.unshift(item);
        stopped = 'token_budget';
        return null;
      }
      cursor = item.id;
      inFlight.add(item.id);
      return item.id;
    }
  };

  const checkpoint = async (force = false) => {
    if (!force && Date.now() - lastCheckpoint < CHECKPOINT_MS) return;
    lastCheckpoint = Date.now();
    await job.saveCheckpoint({ ...state, after: finishedUpTo() });
  };

  const worker = async () => {
    for (;;) {
      const id = await next();
      if (id === null) return;
      try {
        const options = { provider, settings, signal: job.signal, jobId: job.id, slot };
        if (kind === 'shops') await ai.generateShop(id, {}, `job:${job.id}`, options);
        else await ai.rewriteCoupon(id, {}, `job:${job.id}`, options);
        state.saved++;
        job.progress({ done: 1 });
      } catch (err) {
        if (job.signal.aborted) throw job.signal.reason;
        if (err instanceof BudgetSpent || (isServiceError(err) && err.code === 'svc_ai_budget_exhausted')) {
          stopped ??= err instanceof BudgetSpent ? 'token_budget' : 'daily_token_budget';
          lowestLeft = Math.min(lowestLeft, id);
          continue;
        }
        if (!isServiceError(err)) throw err;
        // A refused key, a base URL the outbound guard refuses, or a provider that vanished from the
        // settings fails every item alike: stop the run on it.
        if (err.code === 'svc_ai_not_configured' || err.code === 'svc_fetch_blocked' || err.data.reason === 'unauthorized') {
          fatal = err;
          throw err;
        }
        state.failed++;
        if (state.failures.length < MAX_LISTED_FAILURES)
          state.failures.push({ id, code: err.code, reason: typeof err.data.reason === 'string' ? err.data.reason : null, message: err.message.slice(0, 300) });
        job.progress({ done: 1, failed: 1 });
      } finally {
        inFlight.delete(id);
      }
      await checkpoint();
    }
  };

  // Each call in flight listens on the job's signal (the SDK's request, a backoff): not a leak.
  setMaxListeners(settings.concurrency * 4 + 10, job.signal);
  job.log('info', 'AI bulk run started', {
    kind,
    filter,
    overwrite,
    concurrency: settings.concurrency,
    token_budget: budget,
    after: state.after,
    model: provider.model,
  });
  const results = await Promise.allSettled(Array.from({ length: settings.concurrency * 2 }, () => worker()));
  const failedWorker = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failedWorker) {
    // Keep what finished, then stop (a cancel) or fail (a fatal error); saveCheckpoint throws JobStopped on a stop.
    if (!job.signal.aborted) await job.saveCheckpoint({ ...state, after: finishedUpTo() });
    throw job.signal.aborted ? job.signal.reason : (fatal ?? failedWorker.reason);
  }
  await checkpoint(true);
  const usage = await deps.calls.jobUsage(job.id);
  job.log('info', stopped ? `AI bulk run stopped at its ${stopped === 'token_budget' ? 'token budget' : 'daily token budget'}` : 'AI bulk run finished', {
    kind,
    saved: state.saved,
    skipped: state.skipped,
    failed: state.failed,
    total_tokens: usage.tokens.total_tokens,
    counted_tokens: counted,
  });
  return {
    kind,
    saved: state.saved,
    skipped: state.skipped,
    failed: state.failed,
    failures: state.failures,
    stopped,
    token_budget: budget,
    counted_tokens: counted,
    usage,
  };
}
