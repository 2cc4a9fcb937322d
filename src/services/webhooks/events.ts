// Events: what the services announce inside their transaction. `emit(t, hook, ...args)` writes
// one outbox row per enabled subscription that wants the event, in `t` (so a rolled-back change
// sends nothing and a committed one is never lost), and fires the in-process hook once `t` has
// committed. The webhook event of a hook is its name without `cashtrack.`; its `data` is shaped
// from the hook's arguments below (docs/api.md "Webhooks" lists them).
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { SettingsService } from '../settings/index.js';
import { newDeliveryId } from './signing.js';

const WEBHOOKS_REVISION = 'webhooks_revision';

// biome-ignore lint/suspicious/noExplicitAny: each event's shaper takes its own hook's arguments.
type Shape = (...args: any[]) => Record<string, unknown>;

/** Each hook that is also a webhook event, and how its arguments become the event's `data`. */
const SHAPES: Record<string, Shape> = {
  [HOOKS.orderRecorded]: (context) => ({ ...context }),
  [HOOKS.orderStatusChanged]: (context) => ({ ...context }),
  [HOOKS.orderAssigned]: (context) => ({ ...context }),
  [HOOKS.orderHeld]: (context) => ({ ...context }),
  [HOOKS.orderReviewed]: (context) => ({ ...context }),
  [HOOKS.orderNetworkPaid]: (context) => ({ ...context }),
  [HOOKS.ledgerEntryPosted]: (entry) => ({ entry }),
  [HOOKS.payoutCreated]: (payout, extra) => ({ payout, ...extra }),
  [HOOKS.payoutStatusChanged]: (payout, extra) => ({ payout, ...extra }),
  [HOOKS.payoutBatchCreated]: (batch, extra) => ({ batch, ...extra }),
  [HOOKS.payoutBatchSent]: (batch, extra) => ({ batch, ...extra }),
  [HOOKS.payoutBatchFinished]: (batch, extra) => ({ batch, ...extra }),
  // The refusal, not the parameters received (they may be large; the record keeps them).
  [HOOKS.postbackRejected]: (r) => ({
    postback_id: r.id,
    network: r.network,
    ip: r.ip,
    code: r.code,
    message: r.message,
    transaction_id: r.transaction_id,
    status: r.status,
    test: r.test,
    received_at: r.received_at,
  }),
  [HOOKS.jobFinished]: (job) => ({ job }),
  [HOOKS.memberErased]: (erasure, extra) => ({ ...erasure, ...extra }),
  [HOOKS.claimCreated]: (claim, extra) => ({ claim, ...extra }),
  [HOOKS.claimStatusChanged]: (claim, extra) => ({ claim, ...extra }),
  [HOOKS.claimDeadlineNear]: (claim, extra) => ({ claim, ...extra }),
  [HOOKS.networkStalled]: (health, extra) => ({ health, ...extra }),
  [HOOKS.networkRecovered]: (health, extra) => ({ health, ...extra }),
  [HOOKS.pageCreated]: (page, extra) => ({ page, ...extra }),
  [HOOKS.pagePublished]: (page, extra) => ({ page, ...extra }),
  [HOOKS.pageDeleted]: (page, extra) => ({ page, ...extra }),
  [HOOKS.logoFetched]: (logo, extra) => ({ logo, ...extra }),
};

/** The test event `POST /webhooks/{id}/test` sends; never emitted by a change. */
export const PING_EVENT = 'ping';

/** Every event a subscription may ask for (`*` asks for all of them, those added later included). */
export const WEBHOOK_EVENTS: readonly string[] = Object.keys(SHAPES).map(eventName);

function eventName(hook: string): string {
  return hook.replace(/^cashtrack\./, '');
}

/** A subscription as the outbox writer needs it. */
interface Listener {
  id: number;
  all: boolean;
  events: Set<string>;
}

/** One event's webhook body: the Standard Webhooks `{type, timestamp, data}` shape. */
export function eventBody(type: string, at: Date, data: unknown): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data });
}

/** Writes events to the webhook outbox in the caller's transaction and fires their hooks after commit. */
export class WebhookEvents {
  /** The enabled subscriptions and the revision they were read at. */
  private cache: { revision: string; listeners: Listener[] } | null = null;
  /** Per transaction, the subscriptions it reads (the revision is checked once a transaction). */
  private readonly perTransaction = new WeakMap<Transaction, Promise<Listener[]>>();
  private readonly queued = new Set<() => void>();

  constructor(private readonly deps: { db: Database; clock: Clock; hooks: HookBus; settings: SettingsService }) {}

  /** Calls `fn` after a transaction that queued deliveries has committed (the sender's kick). */
  onQueued(fn: () => void): () => void {
    this.queued.add(fn);
    return () => this.queued.delete(fn);
  }

  /** `hook` happened in `t`: outbox rows now, the hook (with `args`) after commit. */
  emit(t: Transaction, hook: string, ...args: unknown[]): Promise<void> {
    return this.emitMany(t, [[hook, ...args]]);
  }

  /** Several events of one transaction, in order. */
  async emitMany(t: Transaction, events: [hook: string, ...args: unknown[]][]): Promise<void> {
    if (events.length === 0) return;
    const listeners = await this.listeners(t);
    const rows: unknown[][] = [];
    const now = this.deps.clock.now();
    for (const [hook, ...args] of events) {
      const shape = SHAPES[hook];
      if (!shape) continue;
      const type = eventName(hook);
      const wanted = listeners.filter((l) => l.all || l.events.has(type));
      if (wanted.length === 0) continue;
      const body = eventBody(type, now, shape(...args));
      for (const l of wanted) rows.push([newDeliveryId(now), l.id, type, body, 'pending', 0, now, now, now]);
    }
    if (rows.length > 0) await this.insert(rows, t);
    t.afterCommit(() => {
      for (const [hook, ...args] of events) this.deps.hooks.doAction(hook, ...args);
      if (rows.length > 0) for (const fn of this.queued) fn();
    });
  }

  /** Outbox rows `[id, webhook_id, event, payload, status, attempts, next_attempt_at, created_at, updated_at]`. */
  async insert(rows: unknown[][], t: Transaction): Promise<void> {
    const columns = ['id', 'webhook_id', 'event', 'payload', 'status', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'];
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      const one = `(${columns.map(() => '?').join(', ')})`;
      await this.deps.db.execute(`INSERT INTO webhook_deliveries (${columns.join(', ')}) VALUES ${chunk.map(() => one).join(', ')}`, chunk.flat(), t);
    }
  }

  /** Every process reads the subscriptions again once this has run in a committed transaction. */
  bumpRevision(t: Transaction): Promise<void> {
    return this.deps.settings.bumpRevision(WEBHOOKS_REVISION, t);
  }

  private listeners(t: Transaction): Promise<Listener[]> {
    // Once per whole transaction: a group of money writes reads it for all its units.
    let p = this.perTransaction.get(t.outermost);
    if (!p) {
      p = this.read(t);
      this.perTransaction.set(t.outermost, p);
    }
    return p;
  }

  private async read(t: Transaction): Promise<Listener[]> {
    // One primary-key read a transaction tells whether a subscription changed anywhere.
    const revision = (await this.deps.settings.get(WEBHOOKS_REVISION, t)) ?? '0';
    if (this.cache?.revision === revision) return this.cache.listeners;
    const rows = await this.deps.db.select<{ id: number; events: string }>('SELECT id, events FROM webhooks WHERE enabled = ?', [true], t);
    const listeners = rows.map((r) => {
      const events = JSON.parse(r.events) as string[];
      return { id: Number(r.id), all: events.includes('*'), events: new Set(events) };
    });
    this.cache = { revision, listeners };
    return listeners;
  }
}
