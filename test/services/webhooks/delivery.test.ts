// Webhook deliveries end to end inside one process: the outbox written in the event's own
// transaction, the sender POSTing through the real outbound guard to a receiver on 127.0.0.1,
// signatures checked as a receiver would, retries driven by a manual clock.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { buildContext } from '../../../src/context.js';
import { toInt } from '../../../src/db/values.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../../helpers/receiver.js';

const clock = new ManualClock('2026-03-01T12:00:00Z');

describeEachDialect(
  'webhook deliveries',
  (use) => {
    let receiver: Receiver;
    let n = 0;
    beforeAll(async () => {
      receiver = await startReceiver();
    });
    afterAll(async () => {
      await receiver.close();
    });
    afterEach(async () => {
      // Each test subscribes its own receivers: nothing of one test is sent in the next.
      const { items } = await use().ctx.webhooks.list({ page: 1, per_page: 100 });
      for (const w of items) await use().ctx.webhooks.remove(w.id, 'test');
      receiver.received.length = 0;
      receiver.answers.length = 0;
      receiver.fallback = 204;
    });

    const member = async () => (await use().ctx.users.create({ login: `wh${++n}`, email: `wh${n}@example.com` })).id;
    const credit = async (amount = '5.00') => use().ctx.ledger.adjust({ member_id: await member(), type: 'credit', amount, note: 'webhook test' }, 'admin');
    const subscribe = (events: string[] = ['ledger.entry_posted'], url = receiver.url) => use().ctx.webhooks.create({ url, events }, 'admin');
    const outbox = (webhookId: number) =>
      use().ctx.db.select<{ id: string; status: string; attempts: unknown; next_attempt_at: unknown }>(
        'SELECT id, status, attempts, next_attempt_at FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id',
        [webhookId],
      );
    const only = async (webhookId: number) => {
      const { items } = await use().ctx.webhooks.deliveries(webhookId, { page: 1, per_page: 100 });
      expect(items).toHaveLength(1);
      return use().ctx.webhooks.delivery(items[0].id);
    };

    it('writes a delivery for each enabled subscription that wants the event and sends it signed as Standard Webhooks says', async () => {
      const ledgerHook = await subscribe(['ledger.entry_posted']);
      const payoutHook = await subscribe(['payout.created']);
      const { entry } = await credit('5.00');
      expect(await outbox(ledgerHook.id)).toEqual([expect.objectContaining({ status: 'pending' })]);
      expect(await outbox(payoutHook.id)).toEqual([]);

      expect(await use().ctx.webhookSender.sendDue()).toBe(1);
      expect(receiver.received).toHaveLength(1);
      const [got] = receiver.received;
      const delivery = await only(ledgerHook.id);
      expect(got.headers['webhook-id']).toBe(delivery.id);
      expect(got.headers['content-type']).toBe('application/json');
      expect(verifyStandardWebhook(ledgerHook.secret, got, clock.now().getTime() / 1000)).toBe(true);
      expect(verifyStandardWebhook(payoutHook.secret, got, clock.now().getTime() / 1000)).toBe(false);
      expect(verifyStandardWebhook(ledgerHook.secret, { ...got, body: got.body.replace('5.00', '6.00') }, clock.now().getTime() / 1000)).toBe(false);
      expect(JSON.parse(got.body)).toEqual({
        type: 'ledger.entry_posted',
        timestamp: clock.now().toISOString(),
        data: { entry: expect.objectContaining({ id: entry.id, amount: '5.00', type: 'adjustment' }) },
      });
      expect(delivery).toMatchObject({
        status: 'delivered',
        attempts: 1,
        last_status: 204,
        last_error: null,
        next_attempt_at: null,
        delivered_at: clock.now().toISOString(),
        payload: JSON.parse(got.body),
      });
      expect(delivery.duration_ms).toBeGreaterThanOrEqual(0);
    });

    it('writes no delivery and fires no hook for an event whose transaction rolls back', async () => {
      const hook = await subscribe(['*']);
      let fired = 0;
      use().ctx.hooks.addAction(HOOKS.payoutCreated, 'test/rollback', () => fired++);
      await expect(
        use().ctx.db.transaction(async (t) => {
          await use().ctx.events.emit(t, HOOKS.payoutCreated, { id: 1 }, { actor: 'admin' });
          throw new Error('the change failed after its event');
        }),
      ).rejects.toThrow('the change failed after its event');
      // A refused debit rolls back its whole transaction too.
      await expect(use().ctx.ledger.adjust({ member_id: await member(), type: 'debit', amount: '1.00', note: 'too much' }, 'admin')).rejects.toMatchObject({
        code: 'svc_insufficient_funds',
      });
      expect(await outbox(hook.id)).toEqual([]);
      expect(fired).toBe(0);
      use().ctx.hooks.wp.removeAction(HOOKS.payoutCreated, 'test/rollback');
    });

    it('retries a delivery answered 500 after the first backoff step and not before, with the same id and body', async () => {
      const hook = await subscribe();
      receiver.answers.push(500);
      await credit();
      await use().ctx.webhookSender.sendDue();
      let delivery = await only(hook.id);
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, last_status: 500, last_error: 'The receiver answered 500.' });
      const wait = new Date(delivery.next_attempt_at!).getTime() - clock.now().getTime();
      expect(wait).toBeGreaterThanOrEqual(4_000);
      expect(wait).toBeLessThanOrEqual(6_000);

      clock.advance(3_999);
      expect(await use().ctx.webhookSender.sendDue()).toBe(0);
      clock.advance(2_001);
      expect(await use().ctx.webhookSender.sendDue()).toBe(1);
      delivery = await only(hook.id);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, last_status: 204, last_error: null });
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id]);
      expect(receiver.received[1].body).toBe(receiver.received[0].body);
      expect(verifyStandardWebhook(hook.secret, receiver.received[1], clock.now().getTime() / 1000)).toBe(true);
      expect((await use().ctx.webhooks.get(hook.id)).failure_count).toBe(0);
    });

    it('counts a receiver that does not answer within the timeout as a failed attempt', async () => {
      const hook = await subscribe();
      receiver.answers.push('hang');
      await credit();
      await use().ctx.webhookSender.sendDue();
      const delivery = await only(hook.id);
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, last_status: null });
      expect(delivery.last_error).toMatch(/time/i);
      expect(delivery.next_attempt_at).not.toBeNull();
      expect((await use().ctx.webhooks.get(hook.id)).failure_count).toBe(1);
    });

    it('gives a delivery up as dead after its last scheduled retry', async () => {
      const hook = await subscribe();
      receiver.fallback = 503;
      await credit();
      await use().ctx.webhookSender.sendDue();
      clock.advance(6_000);
      await use().ctx.webhookSender.sendDue();
      expect(await only(hook.id)).toMatchObject({ status: 'failed', attempts: 2 });
      clock.advance(12_000);
      await use().ctx.webhookSender.sendDue();
      expect(await only(hook.id)).toMatchObject({ status: 'dead', attempts: 3, last_status: 503, next_attempt_at: null });
      clock.advance(86_400_000);
      expect(await use().ctx.webhookSender.sendDue()).toBe(0);
      expect(receiver.received).toHaveLength(3);
    });

    it('disables a subscription at once when its receiver answers 410, and sends it nothing more', async () => {
      const hook = await subscribe();
      receiver.answers.push(410);
      await credit();
      await use().ctx.webhookSender.sendDue();
      expect(await only(hook.id)).toMatchObject({ status: 'dead', last_status: 410 });
      expect(await use().ctx.webhooks.get(hook.id)).toMatchObject({ enabled: false, disabled_reason: 'The receiver answered 410 Gone.' });
      await credit();
      expect(await outbox(hook.id)).toHaveLength(1);
    });

    it('disables a subscription whose attempts fail the configured number of times in a row, and logs it', async () => {
      const hook = await subscribe();
      receiver.fallback = 500;
      await credit();
      await credit();
      await use().ctx.webhookSender.sendDue();
      expect(await use().ctx.webhooks.get(hook.id)).toMatchObject({ enabled: true, failure_count: 2 });
      clock.advance(6_000);
      await use().ctx.webhookSender.sendDue();
      const disabled = await use().ctx.webhooks.get(hook.id);
      expect(disabled).toMatchObject({ enabled: false, failure_count: 4 });
      expect(disabled.disabled_reason).toMatch(/^4 delivery attempts failed in a row/);
      // Its deliveries wait (no due time) instead of being retried or given up.
      expect((await outbox(hook.id)).map((d) => [d.status, d.next_attempt_at])).toEqual([
        ['failed', null],
        ['failed', null],
      ]);
      await use().ctx.logger.flush();
      const { items } = await use().ctx.logger.list({ source: 'webhooks', search: 'Webhook subscription disabled', page: 1, per_page: 10 } as never);
      expect(items.map((l) => l.context)).toContainEqual(expect.objectContaining({ webhook_id: hook.id }));
    });

    it('makes the waiting deliveries of a re-enabled subscription due at once, with its failures cleared', async () => {
      const hook = await subscribe();
      receiver.answers.push(500);
      await credit();
      await use().ctx.webhookSender.sendDue();
      await use().ctx.webhooks.update(hook.id, { enabled: false }, 'admin');
      expect((await outbox(hook.id))[0].next_attempt_at).toBeNull();
      clock.advance(3_600_000);
      expect(await use().ctx.webhookSender.sendDue()).toBe(0);
      const enabled = await use().ctx.webhooks.update(hook.id, { enabled: true }, 'admin');
      expect(enabled).toMatchObject({ enabled: true, failure_count: 0, disabled_reason: null });
      expect(await use().ctx.webhookSender.sendDue()).toBe(1);
      expect(await only(hook.id)).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('sends a test ping once, whatever it answers, without counting its failure against the subscription', async () => {
      const hook = await subscribe();
      const ok = await use().ctx.webhooks.test(hook.id, 'admin');
      expect(ok).toMatchObject({ event: 'ping', status: 'delivered', attempts: 1, last_status: 204, payload: { type: 'ping', data: { webhook_id: hook.id } } });
      expect(verifyStandardWebhook(hook.secret, receiver.received[0], clock.now().getTime() / 1000)).toBe(true);
      receiver.answers.push(500);
      const failed = await use().ctx.webhooks.test(hook.id, 'admin');
      expect(failed).toMatchObject({ event: 'ping', status: 'dead', attempts: 1, last_status: 500, next_attempt_at: null });
      expect((await use().ctx.webhooks.get(hook.id)).failure_count).toBe(0);
      await expect(use().ctx.webhooks.test(999_999, 'admin')).rejects.toMatchObject({ code: 'svc_webhook_not_found', status: 404 });
    });

    it('counts a 2xx as delivered whatever the size of the page that comes with it', async () => {
      const hook = await subscribe();
      receiver.answers.push('large');
      expect(await use().ctx.webhooks.test(hook.id, 'admin')).toMatchObject({ event: 'ping', status: 'delivered', attempts: 1, last_status: 200 });
    });

    it('redelivers a delivery with the same id and body and a fresh signature, restarting its retry schedule', async () => {
      const hook = await subscribe();
      receiver.fallback = 500;
      await credit();
      await use().ctx.webhookSender.sendDue();
      clock.advance(6_000);
      await use().ctx.webhookSender.sendDue();
      clock.advance(12_000);
      await use().ctx.webhookSender.sendDue();
      const dead = await only(hook.id);
      expect(dead).toMatchObject({ status: 'dead', attempts: 3 });
      receiver.fallback = 200;
      clock.advance(1_000);
      const again = await use().ctx.webhooks.redeliver(dead.id, 'admin');
      expect(again).toMatchObject({ id: dead.id, status: 'delivered', attempts: 1, last_status: 200 });
      const last = receiver.received.at(-1)!;
      expect(last.headers['webhook-id']).toBe(dead.id);
      expect(last.body).toBe(receiver.received[0].body);
      expect(last.headers['webhook-timestamp']).not.toBe(receiver.received[0].headers['webhook-timestamp']);
      expect(verifyStandardWebhook(hook.secret, last, clock.now().getTime() / 1000)).toBe(true);
      await expect(use().ctx.webhooks.redeliver('msg_00000000000000000000000000', 'admin')).rejects.toMatchObject({
        code: 'svc_webhook_delivery_not_found',
        status: 404,
      });
      await use().ctx.webhooks.update(hook.id, { enabled: false }, 'admin');
      await expect(use().ctx.webhooks.redeliver(dead.id, 'admin')).rejects.toMatchObject({ code: 'svc_webhook_disabled', status: 409 });
    });

    it('reaches the subscriptions another process created since it last looked', async () => {
      const other = buildContext(use().config, { logStream: null, clock });
      try {
        // The other process reads (and caches) the subscriptions: none for this event.
        const before = await other.ledger.adjust({ member_id: await member(), type: 'credit', amount: '1.00', note: 'before' }, 'admin');
        const hook = await subscribe(['ledger.entry_posted']);
        const after = await other.ledger.adjust({ member_id: await member(), type: 'credit', amount: '2.00', note: 'after' }, 'admin');
        const payloads = (await use().ctx.db.select<{ payload: string }>('SELECT payload FROM webhook_deliveries WHERE webhook_id = ?', [hook.id])).map(
          (r) => JSON.parse(r.payload).data.entry.id,
        );
        expect(payloads).toEqual([after.entry.id]);
        expect(payloads).not.toContain(before.entry.id);
        await use().ctx.webhooks.update(hook.id, { enabled: false }, 'admin');
        await other.ledger.adjust({ member_id: await member(), type: 'credit', amount: '3.00', note: 'disabled' }, 'admin');
        expect(await outbox(hook.id)).toHaveLength(1);
      } finally {
        await other.close();
      }
    });

    it('writes order, ledger and payout events to the outbox of a subscription that wants every event', async () => {
      const hook = await subscribe(['*']);
      const id = await member();
      const order = await use().ctx.orders.record(
        { network: 'awin', transaction_id: `WH-${id}`, source: 'manual', sale_amount: '500.00', commission: '100.00', member_id: id },
        'admin',
      );
      await use().ctx.orders.update(order.id, { status: 'approved' }, 'admin');
      const payout = await use().ctx.payouts.create({ member_id: id, amount: '20.00', method: 'paypal' }, 'admin');
      await use().ctx.payouts.complete(payout.payout.id, { reference: 'PP-1' }, 'admin');
      const unmatched = await use().ctx.orders.record(
        { network: 'awin', transaction_id: `WH-U-${id}`, source: 'postback', sale_amount: '50.00', commission: '5.00' },
        'system',
      );
      await use().ctx.orders.assign(unmatched.id, id, 'admin');
      const held = await use().ctx.orders.record(
        { network: 'awin', transaction_id: `WH-H-${id}`, source: 'postback', sale_amount: '20000.00', commission: '1500.00', member_id: id },
        'system',
      );
      await use().ctx.orders.release(held.id, 'admin');
      const rows = await use().ctx.db.select<{ event: string; payload: string }>(
        'SELECT event, payload FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id',
        [hook.id],
      );
      // In the order they happened: ids sort by creation.
      expect(rows.map((r) => r.event)).toEqual([
        'order.recorded',
        'ledger.entry_posted',
        'order.status_changed',
        'ledger.entry_posted',
        'payout.created',
        'payout.status_changed',
        'order.recorded',
        'order.assigned',
        'order.recorded',
        'order.held',
        'order.reviewed',
      ]);
      const data = (event: string) => JSON.parse(rows.find((r) => r.event === event)!.payload).data;
      expect(data('order.status_changed')).toMatchObject({ order_id: order.id, from: 'pending', to: 'approved', actor: 'admin' });
      expect(data('payout.status_changed')).toMatchObject({ payout: { id: payout.payout.id, status: 'paid' }, from: 'pending', to: 'paid', actor: 'admin' });
      expect(data('order.assigned')).toMatchObject({ order_id: unmatched.id, member_id: id });
      expect(data('order.held')).toMatchObject({ order_id: held.id, reason: 'above_ceiling' });
      expect(data('order.reviewed')).toMatchObject({ order_id: held.id, decision: 'released' });
    });

    it('refuses an unknown event and a URL the outbound guard refuses, storing nothing', async () => {
      await expect(use().ctx.webhooks.create({ url: receiver.url, events: ['order.exploded'] }, 'admin')).rejects.toMatchObject({
        code: 'svc_webhook_event_unknown',
        status: 400,
      });
      await expect(use().ctx.webhooks.create({ url: receiver.url, events: [] }, 'admin')).rejects.toMatchObject({ code: 'svc_webhook_event_unknown' });
      await expect(use().ctx.webhooks.create({ url: 'http://10.0.0.1/hook', events: ['*'] }, 'admin')).rejects.toMatchObject({
        code: 'svc_fetch_blocked',
        status: 422,
        data: { reason: 'private_address' },
      });
      await expect(use().ctx.webhooks.create({ url: 'ftp://example.com/hook', events: ['*'] }, 'admin')).rejects.toMatchObject({
        code: 'svc_fetch_blocked',
        data: { reason: 'scheme' },
      });
      const hook = await subscribe();
      await expect(use().ctx.webhooks.update(hook.id, { url: 'http://169.254.169.254/' }, 'admin')).rejects.toMatchObject({ code: 'svc_fetch_blocked' });
      await expect(use().ctx.webhooks.update(999_999, { description: 'x' }, 'admin')).rejects.toMatchObject({ code: 'svc_webhook_not_found' });
      await expect(use().ctx.webhooks.remove(999_999, 'admin')).rejects.toMatchObject({ code: 'svc_webhook_not_found' });
      expect((await use().ctx.webhooks.list({ page: 1, per_page: 100 })).total).toBe(1);
    });

    it('shows the secret only when it is made, stores it sealed, and signs with a rotated one at once', async () => {
      const hook = await subscribe();
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await use().ctx.webhooks.get(hook.id)).not.toHaveProperty('secret');
      expect((await use().ctx.webhooks.list({ page: 1, per_page: 10 })).items[0]).not.toHaveProperty('secret');
      const [row] = await use().ctx.db.select<{ secret: string }>('SELECT secret FROM webhooks WHERE id = ?', [hook.id]);
      expect(row.secret.startsWith('e1:')).toBe(true);
      expect(row.secret).not.toContain(hook.secret.slice(6));
      const rotated = await use().ctx.webhooks.update(hook.id, { rotate_secret: true }, 'admin');
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(hook.secret);
      await use().ctx.webhooks.test(hook.id, 'admin');
      const got = receiver.received.at(-1)!;
      expect(verifyStandardWebhook(rotated.secret!, got, clock.now().getTime() / 1000)).toBe(true);
      expect(verifyStandardWebhook(hook.secret, got, clock.now().getTime() / 1000)).toBe(false);
    });

    it('prunes delivered and dead deliveries past the retention and keeps the ones still to send', async () => {
      const hook = await subscribe();
      receiver.answers.push(204, 500);
      await credit();
      await credit();
      await use().ctx.webhookSender.sendDue();
      clock.advance(31 * 86_400_000);
      expect(await use().ctx.webhooks.prune()).toBe(1);
      expect((await outbox(hook.id)).map((d) => d.status)).toEqual(['failed']);
      expect(toInt((await outbox(hook.id))[0].attempts)).toBe(1);
    });
  },
  { 'webhooks.timeout_ms': 500, 'webhooks.retry_schedule_seconds': [5, 10], 'webhooks.disable_after_failures': 4, 'webhooks.retention_days': 30 },
  { clock },
);
