// The stable extension surface: named actions and filters in the @wordpress/hooks model, fired by
// the services. Extensions are modules listed in config (`extensions`), loaded at start; each
// exports `register(hooks, ctx)`. docs/hooks.md lists every hook with its payload.
import { createHooks, type Hooks as WpHooks } from '@wordpress/hooks';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { importModule } from '../import-module.js';

/** Every hook the services fire; keep docs/hooks.md in step. */
export const HOOKS = {
  userCreated: 'cashtrack.user.created',
  /** Action: a member was erased (anonymised), `({ member_id, erased_at, forced, written_off, payouts_cancelled }, { actor })`. */
  memberErased: 'cashtrack.member.erased',
  authFailed: 'cashtrack.auth.failed',
  ledgerEntryPosted: 'cashtrack.ledger.entry_posted',
  payoutCreated: 'cashtrack.payout.created',
  payoutStatusChanged: 'cashtrack.payout.status_changed',
  /** A payout batch was made, `(batch, { actor })`. */
  payoutBatchCreated: 'cashtrack.payout.batch_created',
  /** A payout batch was sent (its file taken to the bank, or its results began), `(batch, { actor })`. */
  payoutBatchSent: 'cashtrack.payout.batch_sent',
  /** Every item of a payout batch is final (paid or cancelled), `(batch, { actor })`. */
  payoutBatchFinished: 'cashtrack.payout.batch_finished',
  orderRecorded: 'cashtrack.order.recorded',
  orderStatusChanged: 'cashtrack.order.status_changed',
  orderAssigned: 'cashtrack.order.assigned',
  /** A network's report was recorded but held for review (no ledger effect until released). */
  orderHeld: 'cashtrack.order.held',
  /** An administrator released or declined a held order. */
  orderReviewed: 'cashtrack.order.reviewed',
  /** The network paid an order (a payment line stamped it); `released` when its cashback became available by it. */
  orderNetworkPaid: 'cashtrack.order.network_paid',
  /** After a received postback's record is stored (every outcome, tests included). */
  postbackReceived: 'cashtrack.postback.received',
  /** An advertiser's logo was fetched and set, `(result, { actor })` (after the commit). */
  logoFetched: 'cashtrack.logo.fetched',
  /** A refused postback's record was stored (not each repeat counted on an aggregated record). */
  postbackRejected: 'cashtrack.postback.rejected',
  /** A job ended: done, failed or cancelled. */
  jobFinished: 'cashtrack.job.finished',
  /** A refresh imported a coupon the site did not have. */
  couponCreated: 'cashtrack.coupon.created',
  /** A coupon changed: a refresh brought the network's changes, an administrator edited or reset it, the AI rewrote it, or it was reverted. */
  couponUpdated: 'cashtrack.coupon.updated',
  /** A refresh found a coupon past its end (or ending before it starts) that was active or scheduled. */
  couponExpired: 'cashtrack.coupon.expired',
  /** A missing-cashback claim was made, `(claim, { actor })`. */
  claimCreated: 'cashtrack.claim.created',
  /** A claim moved to another status, `(claim, { from, to, actor })`. */
  claimStatusChanged: 'cashtrack.claim.status_changed',
  /** A live claim is within `claims.warn_days` of its deadline (once per claim), `(claim, { actor })`. */
  claimDeadlineNear: 'cashtrack.claim.deadline_near',
  /** The intake watchdog found a network stalled (once per outage), `(health, { actor })`. */
  networkStalled: 'cashtrack.network.stalled',
  /** A stalled network's intake, polls and logins are back (once per outage), `(health, { actor })`. */
  networkRecovered: 'cashtrack.network.recovered',
  /** Filter: an order's cashback in minor units, `(amount, { rule, order })`. */
  cashbackAmount: 'cashtrack.cashback.amount',
  /** Filter: the chat messages of an AI generation before they are sent, `(messages, { kind, id, job_id })`. */
  aiPrompt: 'cashtrack.ai.prompt',
  /** Filter: an AI generation's result before it is saved (or shown, on a dry run), `(result, { kind, id, model, dry_run, job_id })`. */
  aiResult: 'cashtrack.ai.result',
  /** After an AI generation succeeded (saved, or proposed on a dry run). */
  aiGenerated: 'cashtrack.ai.generated',
  /** After a shop page is stored (singly or by the bulk job), `(page)`. */
  pageCreated: 'cashtrack.page.created',
  /** When a page becomes `publish` (made so, or updated from `draft`), `(page)`. */
  pagePublished: 'cashtrack.page.published',
  /** After a page is deleted, `(page)` as it was. */
  pageDeleted: 'cashtrack.page.deleted',
  /** Filter: a page body rendered from its template, before it is sanitised, `(html, { advertiser, template })`. */
  pageBody: 'cashtrack.page.body',
} as const;

export interface HookLogger {
  warning(source: string, message: string, context?: Record<string, unknown>): void;
}

/**
 * Actions never break the operation that fires them (the money has moved by then): a throwing
 * callback is logged and the next one runs. Filters run in order; a throwing filter is logged and
 * its input passed on unchanged.
 */
export class HookBus {
  readonly wp: WpHooks = createHooks();
  private logger: HookLogger | null = null;

  attachLogger(logger: HookLogger): void {
    this.logger = logger;
  }

  // biome-ignore lint/suspicious/noExplicitAny: an extension's callback takes whatever its hook passes (docs/hooks.md lists them).
  addAction(name: string, namespace: string, callback: (...args: any[]) => unknown, priority = 10): void {
    this.wp.addAction(
      name,
      namespace,
      (...args: unknown[]) => {
        try {
          const r = callback(...args);
          if (r && typeof (r as Promise<unknown>).catch === 'function') (r as Promise<unknown>).catch((err) => this.failed(name, namespace, err));
        } catch (err) {
          this.failed(name, namespace, err);
        }
      },
      priority,
    );
  }

  // biome-ignore lint/suspicious/noExplicitAny: the extra arguments are the hook's, as documented in docs/hooks.md.
  addFilter<T>(name: string, namespace: string, callback: (value: T, ...args: any[]) => T, priority = 10): void {
    this.wp.addFilter(
      name,
      namespace,
      (value: unknown, ...args: unknown[]) => {
        try {
          return callback(value as T, ...args);
        } catch (err) {
          this.failed(name, namespace, err);
          return value;
        }
      },
      priority,
    );
  }

  doAction(name: string, ...args: unknown[]): void {
    if (this.wp.hasAction(name)) this.wp.doAction(name, ...args);
  }

  applyFilters<T>(name: string, value: T, ...args: unknown[]): T {
    return this.wp.hasFilter(name) ? (this.wp.applyFilters(name, value, ...args) as T) : value;
  }

  private failed(name: string, namespace: string, err: unknown): void {
    this.logger?.warning('hooks', `Hook callback failed: ${name}`, { namespace, error: (err as Error)?.message ?? String(err) });
  }
}

/** Loads each configured extension module and calls its `register(hooks, ctx)`. */
export async function loadExtensions(paths: string[], hooks: HookBus, ctx: unknown): Promise<string[]> {
  const loaded: string[] = [];
  for (const p of paths) {
    const url = pathToFileURL(isAbsolute(p) ? p : resolve(process.cwd(), p)).href;
    const mod = await importModule<{
      register?: (hooks: HookBus, ctx: unknown) => unknown;
      default?: { register?: (hooks: HookBus, ctx: unknown) => unknown };
    }>(url);
    const register = mod.register ?? mod.default?.register;
    if (typeof register !== 'function') throw new Error(`extension ${p} exports no register(hooks, ctx) function`);
    await register(hooks, ctx);
    loaded.push(p);
  }
  return loaded;
}
