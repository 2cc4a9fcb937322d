import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS } from '../helpers/http.js';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../helpers/receiver.js';

type Json = Record<string, any>;

describeEachDialect('webhooks over REST', (use) => {
  const api = adminClient(use);
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  const request = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.server.inject({ method, url: `${NS}${url}`, payload: payload as object, headers: { authorization: api.admin.authorization, ...headers } });

  it('creates a subscription with 201 and its secret once, lists, shows, changes and deletes it', async () => {
    const res = await request('POST', '/webhooks', { url: receiver.url, events: ['order.status_changed', 'payout.created'], description: 'CRM' });
    expect(res.statusCode).toBe(201);
    const hook = res.result as Json;
    expect(hook).toMatchObject({
      url: receiver.url,
      events: ['order.status_changed', 'payout.created'],
      description: 'CRM',
      enabled: true,
      failure_count: 0,
      actor: `user:${api.admin.id}`,
    });
    expect(hook.secret).toMatch(/^whsec_/);

    const list = await request('GET', '/webhooks?enabled=true');
    expect(list.statusCode).toBe(200);
    expect(list.headers['x-wp-total']).toBe('1');
    expect((list.result as Json[])[0]).not.toHaveProperty('secret');
    const shown = await request('GET', `/webhooks/${hook.id}`);
    expect(shown.result).toMatchObject({ id: hook.id, url: receiver.url });
    expect(shown.result).not.toHaveProperty('secret');

    const changed = await request('POST', `/webhooks/${hook.id}`, { events: '*', enabled: false, description: '' });
    expect(changed.statusCode).toBe(200);
    expect(changed.result).toMatchObject({ events: ['*'], enabled: false, description: null, disabled_reason: `Disabled by user:${api.admin.id}.` });
    expect(changed.result).not.toHaveProperty('secret');
    expect(((await request('GET', '/webhooks?enabled=true')).result as Json[]).map((w) => w.id)).not.toContain(hook.id);

    const removed = await request('DELETE', `/webhooks/${hook.id}`);
    expect(removed.result).toMatchObject({ deleted: true, previous: { id: hook.id } });
    const gone = await request('GET', `/webhooks/${hook.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.result).toMatchObject({ code: 'svc_webhook_not_found' });
  });

  it('replays a create with the same Idempotency-Key instead of making a second subscription', async () => {
    const body = { url: receiver.url, events: ['job.finished'] };
    const first = await request('POST', '/webhooks', body, { 'idempotency-key': 'webhook-create-1' });
    const second = await request('POST', '/webhooks', body, { 'idempotency-key': 'webhook-create-1' });
    expect(second.statusCode).toBe(201);
    expect((second.result as Json).id).toBe((first.result as Json).id);
    expect((first.result as Json).secret).toMatch(/^whsec_/);
    // The replay does not hold the secret: it is never stored in the clear, not even with the key.
    expect((second.result as Json).secret).toBeNull();
    const [stored] = await use().ctx.db.select<{ response_body: string }>('SELECT response_body FROM idempotency_keys WHERE idem_key = ?', [
      'webhook-create-1',
    ]);
    expect(stored.response_body).toContain('"secret":null');
    expect(JSON.stringify(stored)).not.toContain((first.result as Json).secret.slice(6));
    await request('DELETE', `/webhooks/${(first.result as Json).id}`);
  });

  it('answers bad input with its codes: validation, unknown events, blocked URLs', async () => {
    const invalid = await request('POST', '/webhooks', { url: 'not a url', events: ['*'] });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { url: expect.any(String) } } });
    const unknown = await request('POST', '/webhooks', { url: receiver.url, events: ['order.exploded'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.result).toMatchObject({ code: 'svc_webhook_event_unknown', data: { status: 400, param: 'events', event: 'order.exploded' } });
    const blocked = await request('POST', '/webhooks', { url: 'http://192.168.1.10/hook', events: ['*'] });
    expect(blocked.statusCode).toBe(422);
    expect(blocked.result).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
    expect((await request('GET', '/webhooks/deliveries/nope')).statusCode).toBe(400);
    const missing = await request('GET', '/webhooks/deliveries/msg_00000000000000000000000000');
    expect(missing.statusCode).toBe(404);
    expect(missing.result).toMatchObject({ code: 'svc_webhook_delivery_not_found' });
  });

  it('answers svc_webhook_event_unknown, as documented, for an unknown event or none, on create and on update', async () => {
    const none = await request('POST', '/webhooks', { url: receiver.url, events: [] });
    expect(none.statusCode).toBe(400);
    expect(none.result).toMatchObject({ code: 'svc_webhook_event_unknown', data: { param: 'events' } });
    const mixed = await request('POST', '/webhooks', { url: receiver.url, events: ['payout.created', 'payout.exploded'] });
    expect(mixed.result).toMatchObject({ code: 'svc_webhook_event_unknown', data: { param: 'events', event: 'payout.exploded' } });
    const hook = (await request('POST', '/webhooks', { url: receiver.url, events: ['payout.created'] })).result as Json;
    const changed = await request('POST', `/webhooks/${hook.id}`, { events: ['order.exploded'] });
    expect(changed.statusCode).toBe(400);
    expect(changed.result).toMatchObject({ code: 'svc_webhook_event_unknown', data: { param: 'events', event: 'order.exploded' } });
    expect(((await request('GET', `/webhooks/${hook.id}`)).result as Json).events).toEqual(['payout.created']);
    await request('DELETE', `/webhooks/${hook.id}`);
  });

  it('sends a ping, shows it in the delivery log and redelivers it with the same id', async () => {
    const hook = (await request('POST', '/webhooks', { url: receiver.url, events: ['ledger.entry_posted'] })).result as Json;
    const ping = await request('POST', `/webhooks/${hook.id}/test`);
    expect(ping.statusCode).toBe(200);
    expect(ping.result).toMatchObject({
      event: 'ping',
      status: 'delivered',
      last_status: 204,
      payload: { type: 'ping', data: { webhook_id: hook.id, actor: `user:${api.admin.id}` } },
    });
    const got = receiver.received.at(-1)!;
    expect(verifyStandardWebhook(hook.secret, got, Date.now() / 1000)).toBe(true);

    const log = await request('GET', `/webhooks/${hook.id}/deliveries?status=delivered&per_page=1`);
    expect(log.headers['x-wp-total']).toBe('1');
    const [entry] = log.result as Json[];
    expect(entry).toMatchObject({ id: (ping.result as Json).id, event: 'ping', status: 'delivered' });
    expect(entry).not.toHaveProperty('payload');
    expect((await request('GET', `/webhooks/deliveries/${entry.id}`)).result).toMatchObject({ id: entry.id, payload: { type: 'ping' } });

    const again = await request('POST', `/webhooks/deliveries/${entry.id}/redeliver`);
    expect(again.result).toMatchObject({ id: entry.id, status: 'delivered', attempts: 1 });
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(entry.id);
    expect((await request('GET', `/webhooks/999999/deliveries`)).statusCode).toBe(404);
    await request('DELETE', `/webhooks/${hook.id}`);
  });

  it('sends an event a route caused once the daemon sender runs', async () => {
    const hook = (await request('POST', '/webhooks', { url: receiver.url, events: ['ledger.entry_posted'] })).result as Json;
    const member = await use().ctx.users.create({ login: 'rest-hooked', email: 'rest-hooked@example.com' });
    use().ctx.webhookSender.start();
    try {
      const before = receiver.received.length;
      const adjusted = await request('POST', '/ledger/adjustments', { member_id: member.id, type: 'credit', amount: '3.00', note: 'hooked' });
      expect(adjusted.statusCode).toBe(201);
      // Kicked after the commit: no poll interval to wait for.
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(before + 1);
      const body = JSON.parse(receiver.received.at(-1)!.body);
      expect(body).toMatchObject({ type: 'ledger.entry_posted', data: { entry: { member_id: member.id, amount: '3.00' } } });
    } finally {
      await use().ctx.webhookSender.stop();
      await request('DELETE', `/webhooks/${hook.id}`);
    }
  });

  it('refuses members and anonymous callers', async () => {
    const member = await createActor(use().ctx, 'member');
    const asMember = await api.server.inject({ url: `${NS}/webhooks`, headers: { authorization: member.authorization } });
    expect(asMember.statusCode).toBe(403);
    expect((await api.server.inject({ url: `${NS}/webhooks` })).statusCode).toBe(401);
  });
});
