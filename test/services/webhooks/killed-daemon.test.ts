// A delivery survives its daemon: real children of the built binary. The first daemon does not
// send (`CASHTRACK_WEBHOOKS_SEND=false`), so the event's outbox row is committed and nothing is
// sent when it is SIGKILLed; a daemon started afterwards sends it on start, with the same id.
// A second case kills a sending daemon in the middle of an attempt (the receiver holds it): the
// next daemon sends the delivery again, still with the same id, once the first one's hold expires.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BinaryRunner, requireCurrentBuild, type Child } from '../../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../../helpers/context.js';
import { createActor, NS, type Actor } from '../../helpers/http.js';
import { waitFor } from '../../helpers/jobs.js';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../../helpers/receiver.js';

function whileAlive<T>(child: Child, fn: () => T | null | false | undefined | Promise<T | null | false | undefined>, what: string): Promise<T> {
  return waitFor(
    async () => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) {
        throw new Error(`cashtrack exited (${child.process.signalCode ?? child.process.exitCode}) before ${what}\nstderr: ${child.stderr.slice(-2000)}`);
      }
      return fn();
    },
    30_000,
    what,
  );
}

for (const dialect of dialects) {
  describe(`a webhook delivery survives a killed daemon [${dialect}]`, () => {
    let t: TestContext;
    let children: BinaryRunner;
    let admin: Actor;
    let receiver: Receiver;
    let seq = 0;

    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      children = new BinaryRunner(t.db, t.config.secret);
      admin = await createActor(t.ctx, 'administrator');
      receiver = await startReceiver();
    });
    afterEach(async () => {
      await children.killAll();
    });
    afterAll(async () => {
      await children?.killAll();
      await receiver?.close();
      await destroyTestContext(t);
    });

    const serve = async (env: Record<string, string>) => {
      const child = children.start(['serve', '--port', '0'], { CASHTRACK_JOBS_CONCURRENCY: '0', CASHTRACK_OUTBOUND_ALLOW: '127.0.0.1:*', ...env });
      const url = await whileAlive(child, () => /listening on (http:\/\/\S+)/.exec(child.stderr)?.[1], 'the daemon to listen');
      return { child, url };
    };
    const call = (url: string, path: string, body: unknown) =>
      fetch(`${url}${NS}${path}`, {
        method: 'POST',
        headers: { authorization: admin.authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const deliveries = (webhookId: number) =>
      t.ctx.db.select<{ id: string; status: string }>('SELECT id, status FROM webhook_deliveries WHERE webhook_id = ?', [webhookId]);
    const credit = async (url: string) => {
      const member = await t.ctx.users.create({ login: `killed-hook${++seq}`, email: `killed-hook${seq}@example.com` });
      const res = await call(url, '/ledger/adjustments', { member_id: member.id, type: 'credit', amount: '9.00', note: 'kill test' });
      expect(res.status).toBe(201);
      return member.id;
    };

    it('sends an event committed by a daemon SIGKILLed before sending it, from the next daemon, with the same id', async () => {
      const first = await serve({ CASHTRACK_WEBHOOKS_SEND: 'false' });
      const created = await call(first.url, '/webhooks', { url: receiver.url, events: ['ledger.entry_posted'] });
      expect(created.status).toBe(201);
      const hook = (await created.json()) as { id: number; secret: string };
      const member = await credit(first.url);
      const [queued] = await deliveries(hook.id);
      expect(queued).toMatchObject({ status: 'pending' });
      first.child.process.kill('SIGKILL');
      expect(await first.child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(receiver.received).toHaveLength(0);

      const second = await serve({});
      const got = await whileAlive(second.child, () => receiver.received.find((r) => r.headers['webhook-id'] === queued.id), 'the delivery to arrive');
      expect(verifyStandardWebhook(hook.secret, got, Date.now() / 1000)).toBe(true);
      expect(JSON.parse(got.body)).toMatchObject({ type: 'ledger.entry_posted', data: { entry: { member_id: member, amount: '9.00' } } });
      await whileAlive(second.child, async () => (await deliveries(hook.id))[0]?.status === 'delivered', 'the delivery to be recorded');
      expect(receiver.received.filter((r) => r.headers['webhook-id'] === queued.id)).toHaveLength(1);
    });

    it('sends again, with the same id, a delivery whose daemon was SIGKILLed during the attempt', async () => {
      const { items } = await t.ctx.webhooks.list({ page: 1, per_page: 100 });
      for (const w of items) await t.ctx.webhooks.remove(w.id, 'test');
      receiver.received.length = 0;
      // The attempt hangs for up to 2 s (the kill comes well before); the dead sender's hold on the
      // delivery (timeout + the lease margin, 3 s here) is then the only wait.
      const env = { CASHTRACK_WEBHOOKS_TIMEOUT_MS: '2000', CASHTRACK_WEBHOOKS_POLL_INTERVAL_MS: '200', CASHTRACK_WEBHOOKS_LEASE_MARGIN_MS: '3000' };
      const first = await serve(env);
      const hook = (await (await call(first.url, '/webhooks', { url: receiver.url, events: ['ledger.entry_posted'] })).json()) as { id: number };
      receiver.answers.push('hang');
      await credit(first.url);
      const held = await whileAlive(first.child, () => receiver.received[0], 'the first attempt to reach the receiver');
      first.child.process.kill('SIGKILL');
      await first.child.exited;
      const [row] = await deliveries(hook.id);
      expect(row).toMatchObject({ id: held.headers['webhook-id'], status: 'pending' });

      const second = await serve(env);
      const again = await waitFor(
        () => {
          if (second.child.process.exitCode !== null) throw new Error(second.child.stderr);
          return receiver.received[1];
        },
        60_000,
        'the second attempt',
      );
      expect(again.headers['webhook-id']).toBe(held.headers['webhook-id']);
      expect(again.body).toBe(held.body);
      await whileAlive(second.child, async () => (await deliveries(hook.id))[0]?.status === 'delivered', 'the delivery to be recorded');
    }, 90_000);
  });
}
