// Sends the outbox: a loop in the daemon (started with it, kicked after each commit that queued
// deliveries, and polling for retries that fall due) claims due deliveries and POSTs each, signed,
// through the outbound guard. At least once: a sender that dies mid-attempt leaves its lease to
// expire and another sender (or the next start) attempts the delivery again, with the same id.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isServiceError } from '../../errors.js';
import type { LogService } from '../logs/index.js';
import type { SecretBox } from '../../keys.js';
import type { WebhookEvents } from './events.js';
import { PING_EVENT } from './events.js';
import type { AttemptRecord, Claimed, DeliveryStore } from './outbox.js';
import { signedHeaders } from './signing.js';
import type { Metrics } from '../../metrics.js';
import { shownUrl } from './shown-url.js';

/** The outbound guard as the sender uses it (ctx.outbound). */
export interface WebhookTransport {
  fetch(
    url: string,
    init: {
      method: 'POST';
      headers: Record<string, string>;
      body: string;
      timeoutMs: number;
      connectTimeoutMs: number;
      maxRedirects: number;
      maxBytes: number;
      overflow: 'truncate';
    },
  ): Promise<{ status: number }>;
}

export interface SenderSettings {
  concurrency: number;
  poll_interval_ms: number;
  timeout_ms: number;
  /** What a claimed delivery's hold adds to timeout_ms, for recording the outcome. */
  lease_margin_ms: number;
  /** Seconds to wait after the 1st, 2nd, ... failed attempt; past the last, the delivery is dead. */
  retry_schedule_seconds: number[];
  /** Failed attempts in a row that disable a subscription. */
  disable_after_failures: number;
}

interface Subscription {
  id: number;
  url: string;
  secret: string;
  enabled: boolean;
}

export interface SenderDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  store: DeliveryStore;
  events: WebhookEvents;
  box: SecretBox;
  transport: WebhookTransport;
  settings: SenderSettings;
  /** [0, 1): spreads retries (tests pass a fixed value). */
  random?: () => number;
  /** Attempts counted by event and outcome (none when absent). */
  metrics?: Metrics;
}

/** Attempts webhook deliveries and records what each came to. */
export class WebhookSender {
  private running = false;
  /** Set by stop(): a pass under way claims nothing more. */
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  private again = false;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly deps: SenderDeps) {}

  /** How long a claimed delivery stays a sender's before another may attempt it. */
  get leaseMs(): number {
    return this.deps.settings.timeout_ms + this.deps.settings.lease_margin_ms;
  }

  /** Starts the loop: a pass now, after each commit that queued deliveries, and every poll interval. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.unsubscribe = this.deps.events.onQueued(() => this.kick());
    this.kick();
  }

  /** Stops the loop; attempts under way finish (each is bounded by the timeout). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
    this.stopping = false;
  }

  /** A pass as soon as possible (one runs at a time; a kick during a pass makes another follow it). */
  kick(): void {
    if (!this.running) return;
    if (this.pass !== null) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pass = this.sendDue()
      .then(
        () => undefined,
        (err) => this.deps.logger.error('webhooks', 'Webhook sender pass failed', { error: (err as Error).message }),
      )
      .finally(() => {
        this.pass = null;
        if (!this.running) return;
        if (this.again) {
          this.again = false;
          setImmediate(() => this.kick());
        } else {
          this.timer = setTimeout(() => this.kick(), this.deps.settings.poll_interval_ms);
          this.timer.unref?.();
        }
      });
  }

  /** Attempts every due delivery, `concurrency` at a time, until none is due; answers how many. */
  async sendDue(): Promise<number> {
    const inFlight = new Set<Promise<void>>();
    let sent = 0;
    for (;;) {
      const free = this.deps.settings.concurrency - inFlight.size;
      const batch = free > 0 && !this.stopping ? await this.claimDue(free) : [];
      for (const d of batch) {
        sent++;
        const p: Promise<void> = this.attempt(d)
          .then(
            () => undefined,
            (err) => this.deps.logger.error('webhooks', 'Webhook attempt failed to record', { delivery_id: d.id, error: (err as Error).message }),
          )
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      if (inFlight.size === 0) return sent;
      if (batch.length === 0 || inFlight.size >= this.deps.settings.concurrency) await Promise.race(inFlight);
    }
  }

  /** Takes up to `limit` due deliveries for an attempt each (see DeliveryStore.claim). */
  claimDue(limit: number): Promise<Claimed[]> {
    return this.deps.store.claim(limit, this.leaseMs);
  }

  /** One attempt of a claimed delivery, recorded; answers the record (null: parked or taken over). */
  async attempt(d: Claimed): Promise<AttemptRecord | null> {
    const sub = await this.subscription(d.webhook_id);
    if (!sub) return null;
    // A disabled subscription's deliveries wait for it to be enabled again; a test ping is sent anyway.
    if (!sub.enabled && d.event !== PING_EVENT) {
      await this.deps.store.park(d);
      return null;
    }
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.deps.box.open(sub.secret, `webhook:${sub.id}`);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'cashtrack-webhooks/1',
        ...signedHeaders(secret, d.id, this.deps.clock.now(), d.payload),
      };
      const timeoutMs = this.deps.settings.timeout_ms;
      ({ status } = await this.deps.transport.fetch(sub.url, {
        method: 'POST',
        headers,
        body: d.payload,
        timeoutMs,
        connectTimeoutMs: Math.min(timeoutMs, 5_000),
        maxRedirects: 0,
        maxBytes: 64 * 1024,
        overflow: 'truncate',
      }));
      if (status < 200 || status > 299)
        error = status >= 300 && status < 400 ? `The receiver answered ${status} (redirects are not followed).` : `The receiver answered ${status}.`;
    } catch (err) {
      error = isServiceError(err) ? `${err.message}${err.data?.reason ? ` (${String(err.data.reason)})` : ''}` : (err as Error).message || String(err);
    }
    const durationMs = Math.round(performance.now() - started);
    return this.settle(d, sub, status, error, durationMs);
  }

  private async settle(d: Claimed, sub: Subscription, status: number | null, error: string | null, durationMs: number): Promise<AttemptRecord | null> {
    const { db, clock, store, settings } = this.deps;
    const ping = d.event === PING_EVENT;
    const gone = status === 410;
    const schedule = settings.retry_schedule_seconds;
    let disabled: string | null = null;
    const record = await db.transaction(async (t) => {
      const [row] = await db.select<{ enabled: unknown; failure_count: unknown }>(
        `SELECT enabled, failure_count FROM webhooks WHERE id = ?${db.forUpdate()}`,
        [sub.id],
        t,
      );
      if (!row) return null;
      const enabled = Boolean(Number(row.enabled));
      const now = clock.now();
      let r: AttemptRecord;
      if (error === null) {
        r = { status: 'delivered', nextAttemptAt: null, responseStatus: status, error: null, durationMs };
      } else {
        // A test ping is one attempt; 410 Gone means the receiver wants no more.
        const exhausted = ping || gone || d.attempts > schedule.length;
        const delay = exhausted ? 0 : schedule[d.attempts - 1] * 1000 * (0.8 + 0.4 * (this.deps.random ?? Math.random)());
        r = {
          status: exhausted ? 'dead' : 'failed',
          nextAttemptAt: exhausted || !enabled ? null : new Date(now.getTime() + delay),
          responseStatus: status,
          error,
          durationMs,
        };
      }
      if (!(await store.record(d, r, t))) return null;
      if (gone && enabled) {
        disabled = 'The receiver answered 410 Gone.';
        await this.disable(sub.id, disabled, t);
        return r;
      }
      if (ping || !enabled) return r;
      if (r.status === 'delivered') {
        if (Number(row.failure_count) !== 0) await db.execute('UPDATE webhooks SET failure_count = 0 WHERE id = ?', [sub.id], t);
        return r;
      }
      const failures = Number(row.failure_count) + 1;
      await db.execute('UPDATE webhooks SET failure_count = ? WHERE id = ?', [failures, sub.id], t);
      if (failures >= settings.disable_after_failures) disabled = `${failures} delivery attempts failed in a row (the last: ${error})`.slice(0, 500);
      if (disabled) await this.disable(sub.id, disabled, t);
      return r;
    });
    if (record) this.deps.metrics?.webhookDelivery(d.event, record.status, durationMs / 1000);
    if (record && record.status !== 'delivered') {
      this.deps.logger[record.status === 'dead' ? 'warning' : 'info'](
        'webhooks',
        record.status === 'dead' ? 'Webhook delivery dead' : 'Webhook delivery failed',
        {
          delivery_id: d.id,
          webhook_id: sub.id,
          event: d.event,
          attempts: d.attempts,
          status,
          error,
          next_attempt_at: record.nextAttemptAt?.toISOString() ?? null,
        },
      );
    }
    if (disabled) this.deps.logger.warning('webhooks', 'Webhook subscription disabled', { webhook_id: sub.id, url: shownUrl(sub.url), reason: disabled });
    return record;
  }

  /** Disables a subscription in `t`: its waiting deliveries stop until it is enabled again. */
  async disable(id: number, reason: string, t: Parameters<DeliveryStore['parkAll']>[1]): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.execute(
      'UPDATE webhooks SET enabled = ?, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ?',
      [false, reason, now, now, id],
      t,
    );
    await this.deps.store.parkAll(id, t);
    await this.deps.events.bumpRevision(t);
  }

  private async subscription(id: number): Promise<Subscription | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>('SELECT id, url, secret, enabled FROM webhooks WHERE id = ?', [id]);
    return row ? { id: Number(row.id), url: String(row.url), secret: String(row.secret), enabled: Boolean(Number(row.enabled)) } : null;
  }
}
