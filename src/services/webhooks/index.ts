// Outgoing webhooks: subscriptions (where to POST which events, with a secret shown once), the
// delivery log, a test ping and redelivery on request. Events reach the outbox through
// `WebhookEvents.emit` inside the services' own transactions; `WebhookSender` sends them.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import type { Replacement } from '../../db/erasure.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { Once } from '../idempotency/index.js';
import { SecretBox } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import { eventBody, PING_EVENT, WEBHOOK_EVENTS, type WebhookEvents } from './events.js';
import { ListWhere, orderClause, pageClause, type StatusCounts } from '../../db/lists.js';
import { DeliveryStore, type Delivery, type DeliveryCountFilters, type DeliveryFilters } from './outbox.js';
import type { WebhookSender } from './sender.js';
import { newDeliveryId, newSecret } from './signing.js';
import { shownUrl } from './shown-url.js';

export { WEBHOOK_EVENTS, PING_EVENT, WebhookEvents } from './events.js';
export { WebhookSender } from './sender.js';
export { DELIVERY_STATUSES, type Delivery, type DeliveryFilters, type DeliveryStatus } from './outbox.js';

/** A subscription as the API shows it: never its secret. */
export interface Webhook {
  id: number;
  /** As shown: user info, query and fragment redacted (shown-url.ts). */
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  /** Failed attempts in a row. */
  failure_count: number;
  actor: string;
  created_at: string;
  updated_at: string;
}

export interface CreateWebhookInput {
  url: string;
  events: string[];
  description?: string | null;
  enabled?: boolean;
}

export interface UpdateWebhookInput {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  /** A new secret, answered once (the old one stops signing at once). */
  rotate_secret?: boolean;
}

/** The fields the subscription list sorts by, and the column each is. */
export const WEBHOOK_ORDERBY = { id: 'id', created_at: 'created_at', updated_at: 'updated_at', failure_count: 'failure_count', url: 'url' } as const;
export type WebhookOrderby = keyof typeof WEBHOOK_ORDERBY;

export interface WebhookFilters {
  page: number;
  per_page: number;
  enabled?: boolean;
  /** Default id (newest first). */
  orderby?: WebhookOrderby;
  order?: 'asc' | 'desc';
}

/** A subscription with its secret: the answer of a create, shown once. */
export type WebhookWithSecret = Webhook & { secret: string };

/** What a create records for its Idempotency-Key: `secret: null` (a secret is never stored in the clear). */
export type RecordedWebhook = Webhook & { secret: null };

/** The URL check of the outbound guard (scheme, port, a literal private address). */
export interface UrlCheck {
  check(url: string): unknown;
}

const COLUMNS = 'id, url, events, description, enabled, disabled_reason, disabled_at, failure_count, actor, created_at, updated_at';

function shape(row: Record<string, unknown>): Webhook {
  return {
    id: toInt(row.id),
    url: shownUrl(String(row.url)),
    events: JSON.parse(String(row.events)) as string[],
    description: (row.description as string | null) ?? null,
    enabled: Boolean(Number(row.enabled)),
    disabled_reason: (row.disabled_reason as string | null) ?? null,
    disabled_at: toIso(row.disabled_at),
    failure_count: toInt(row.failure_count),
    actor: String(row.actor),
    created_at: toIso(row.created_at)!,
    updated_at: toIso(row.updated_at)!,
  };
}

/** The subscriptions' rules and the delivery log's doors (REST and CLI). */
export class WebhookService {
  private readonly box: SecretBox;

  constructor(
    private readonly deps: {
      db: Database;
      clock: Clock;
      logger: LogService;
      events: WebhookEvents;
      store: DeliveryStore;
      sender: WebhookSender;
      guard: UrlCheck;
      secretBox: Buffer;
      retentionDays: number;
    },
  ) {
    this.box = new SecretBox(deps.secretBox);
  }

  /** A new subscription; its secret is in this answer only. 400 svc_webhook_event_unknown, 422 svc_fetch_blocked. */
  async create(input: CreateWebhookInput, actor: string, once?: Once<RecordedWebhook>): Promise<WebhookWithSecret> {
    const events = this.checkEvents(input.events);
    await this.checkUrl(input.url);
    const { db, clock } = this.deps;
    const secret = newSecret();
    const result = await db.transaction(async (t) => {
      await once?.claim?.(t);
      const now = clock.now();
      const { insertId } = await db.execute(
        'INSERT INTO webhooks (url, events, secret, description, enabled, failure_count, actor, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)',
        [input.url, JSON.stringify(events), '', clean(input.description), input.enabled ?? true, actor, now, now],
        t,
      );
      const id = insertId!;
      // Sealed to its subscription: a sealed secret copied onto another row does not open.
      await db.execute('UPDATE webhooks SET secret = ? WHERE id = ?', [this.box.seal(secret, `webhook:${id}`), id], t);
      await this.deps.events.bumpRevision(t);
      const webhook = await this.read(id, t);
      await once?.record({ ...webhook, secret: null }, t);
      return { ...webhook, secret };
    });
    this.deps.logger.info('webhooks', 'Webhook subscription created', { webhook_id: result.id, url: result.url, events, actor });
    return result;
  }

  /** At a member's erasure, in `t`: their words replaced in every stored event body (payout events carry names and details). */
  eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return this.deps.store.eraseWords(replacements, t);
  }

  async list(filters: WebhookFilters): Promise<{ items: Webhook[]; total: number }> {
    const where = new ListWhere().eq('enabled', filters.enabled);
    const order = orderClause(WEBHOOK_ORDERBY, filters, 'id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM webhooks ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM webhooks ${where.sql}`, where.params),
    ]);
    return { items: rows.map(shape), total: toInt(count[0].n) };
  }

  /** 404 svc_webhook_not_found. */
  get(id: number): Promise<Webhook> {
    return this.read(id);
  }

  /**
   * Changes a subscription. Enabling a disabled one clears its failures and makes its waiting
   * deliveries due now; disabling one makes them wait. `rotate_secret` answers the new secret once.
   */
  async update(id: number, input: UpdateWebhookInput, actor: string): Promise<Webhook & { secret?: string }> {
    const events = input.events === undefined ? undefined : this.checkEvents(input.events);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const { db, clock } = this.deps;
    const secret = input.rotate_secret ? newSecret() : undefined;
    const { result, resumed } = await db.transaction(async (t) => {
      const before = await this.read(id, t, true);
      const now = clock.now();
      const set: Record<string, unknown> = { updated_at: now };
      if (input.url !== undefined) set.url = input.url;
      if (events !== undefined) set.events = JSON.stringify(events);
      if (input.description !== undefined) set.description = clean(input.description);
      if (secret !== undefined) set.secret = this.box.seal(secret, `webhook:${id}`);
      let resumed = 0;
      if (input.enabled === true && !before.enabled) Object.assign(set, { enabled: true, disabled_reason: null, disabled_at: null, failure_count: 0 });
      if (input.enabled === false && before.enabled)
        Object.assign(set, { enabled: false, disabled_reason: `Disabled by ${actor}.`.slice(0, 500), disabled_at: now });
      const columns = Object.keys(set);
      await db.execute(`UPDATE webhooks SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), id], t);
      if (input.enabled === true && !before.enabled) resumed = await this.deps.store.resumeAll(id, t);
      if (input.enabled === false && before.enabled) await this.deps.store.parkAll(id, t);
      await this.deps.events.bumpRevision(t);
      if (resumed > 0) t.afterCommit(() => this.deps.sender.kick());
      return { result: await this.read(id, t), resumed };
    });
    this.deps.logger.info('webhooks', 'Webhook subscription updated', {
      webhook_id: id,
      changed: Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined),
      resumed,
      actor,
    });
    return secret === undefined ? result : { ...result, secret };
  }

  /** Deletes a subscription and its delivery log. 404 svc_webhook_not_found. */
  async remove(id: number, actor: string): Promise<{ deleted: true; previous: Webhook }> {
    const { db } = this.deps;
    const previous = await db.transaction(async (t) => {
      const previous = await this.read(id, t, true);
      await this.deps.store.removeAll(id, t);
      await db.execute('DELETE FROM webhooks WHERE id = ?', [id], t);
      await this.deps.events.bumpRevision(t);
      return previous;
    });
    this.deps.logger.info('webhooks', 'Webhook subscription deleted', { webhook_id: id, url: previous.url, actor });
    return { deleted: true, previous };
  }

  /**
   * Sends a `ping` event to the subscription now (enabled or not) and answers its delivery as the
   * attempt left it. A ping is attempted once: it is never retried and never counts toward disabling.
   */
  async test(id: number, actor: string): Promise<Delivery> {
    const { db, clock, sender, store } = this.deps;
    const claimed = await db.transaction(async (t) => {
      await this.read(id, t);
      const now = clock.now();
      const deliveryId = newDeliveryId(now);
      await this.deps.events.insert([[deliveryId, id, PING_EVENT, eventBody(PING_EVENT, now, { webhook_id: id, actor }), 'pending', 0, null, now, now]], t);
      return store.claimOne(deliveryId, sender.leaseMs, false, t);
    });
    await sender.attempt(claimed!);
    return store.get(claimed!.id);
  }

  /** One subscription's delivery log, newest first. 404 svc_webhook_not_found. */
  async deliveries(id: number, filters: DeliveryFilters): Promise<{ items: Delivery[]; total: number }> {
    await this.read(id);
    return this.deps.store.list(id, filters);
  }

  /** The views row of a subscription's deliveries: per status, every status present. 404 svc_webhook_not_found. */
  async deliveryCounts(id: number, filters: DeliveryCountFilters): Promise<StatusCounts> {
    await this.read(id);
    return this.deps.store.counts(id, filters);
  }

  /** One delivery with its payload. 404 svc_webhook_delivery_not_found. */
  delivery(id: string): Promise<Delivery> {
    return this.deps.store.get(id);
  }

  /**
   * Attempts a delivery again now, with the same id and body (a new timestamp and signature), and
   * answers it as the attempt left it; a failure is retried on the schedule from its start.
   * 404 svc_webhook_delivery_not_found, 409 svc_webhook_disabled.
   */
  async redeliver(deliveryId: string, actor: string): Promise<Delivery> {
    const { db, sender, store } = this.deps;
    const claimed = await db.transaction(async (t) => {
      const delivery = await store.get(deliveryId, t);
      const webhook = await this.read(delivery.webhook_id, t, true);
      if (!webhook.enabled && delivery.event !== PING_EVENT) {
        throw new ServiceError(
          'svc_webhook_disabled',
          `Webhook ${webhook.id} is disabled (${webhook.disabled_reason ?? 'no reason given'}): enable it first.`,
          409,
          { webhook_id: webhook.id },
        );
      }
      return store.claimOne(deliveryId, sender.leaseMs, true, t);
    });
    this.deps.logger.info('webhooks', 'Webhook redelivery requested', { delivery_id: deliveryId, actor });
    await sender.attempt(claimed!);
    return store.get(deliveryId);
  }

  /** Deletes the delivery log past `webhooks.retention_days` (maintenance.prune). */
  prune(): Promise<number> {
    return this.deps.store.prune(this.deps.retentionDays);
  }

  private checkEvents(events: string[]): string[] {
    const unique = [...new Set(events)];
    if (unique.length === 0)
      throw new ServiceError('svc_webhook_event_unknown', `Name at least one event (or * for all): ${WEBHOOK_EVENTS.join(', ')}.`, 400, { param: 'events' });
    const unknown = unique.filter((e) => e !== '*' && !WEBHOOK_EVENTS.includes(e));
    if (unknown.length)
      throw new ServiceError('svc_webhook_event_unknown', `Unknown event ${unknown[0]}: events are ${WEBHOOK_EVENTS.join(', ')}, or * for all.`, 400, {
        param: 'events',
        event: unknown[0],
      });
    return unique;
  }

  private async checkUrl(url: string): Promise<void> {
    await this.deps.guard.check(url);
  }

  private async read(id: number, t?: Transaction, lock = false): Promise<Webhook> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM webhooks WHERE id = ?${lock && t ? this.deps.db.forUpdate() : ''}`,
      [id],
      t,
    );
    if (!row) throw new ServiceError('svc_webhook_not_found', `Webhook ${id} not found.`, 404);
    return shape(row);
  }
}

function clean(text: string | null | undefined): string | null {
  const v = text?.trim();
  return v ? v : null;
}

export { DeliveryStore };
