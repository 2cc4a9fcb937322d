// The sender's loop and its edge cases, and the events of jobs and postbacks.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../../src/jobs/runner.js';
import { describeEachDialect } from '../../helpers/context.js';
import { testServer } from '../../helpers/http.js';
import { getPostback, query, shopnetDefinition } from '../../helpers/networks.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

describeEachDialect(
  'the webhook sender',
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
      await use().ctx.webhookSender.stop();
      const { items } = await use().ctx.webhooks.list({ page: 1, per_page: 100 });
      for (const w of items) await use().ctx.webhooks.remove(w.id, 'test');
      receiver.received.length = 0;
      receiver.answers.length = 0;
      receiver.fallback = 204;
    });

    const credit = async () => {
      const member = await use().ctx.users.create({ login: `snd${++n}`, email: `snd${n}@example.com` });
      return use().ctx.ledger.adjust({ member_id: member.id, type: 'credit', amount: '1.00', note: 'sender test' }, 'admin');
    };
    const subscribe = (events: string[] = ['ledger.entry_posted']) => use().ctx.webhooks.create({ url: receiver.url, events }, 'admin');
    const rows = (webhookId: number) =>
      use().ctx.db.select<{ id: string; status: string; attempts: unknown; next_attempt_at: unknown; claim: string | null; last_error: string | null }>(
        'SELECT id, status, attempts, next_attempt_at, claim, last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id',
        [webhookId],
      );

    it('sends what is waiting when it starts, each new event after its commit, and stops cleanly', async () => {
      const hook = await subscribe();
      await credit();
      await credit();
      use().ctx.webhookSender.start();
      use().ctx.webhookSender.start();
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(2);
      await credit();
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(3);
      await use().ctx.webhookSender.stop();
      await credit();
      // Stopped: the new event waits in the outbox.
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received).toHaveLength(3);
      expect((await rows(hook.id)).map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered', 'pending']);
    });

    it('attempts many due deliveries at most `concurrency` at a time and sends them all', async () => {
      const hook = await subscribe();
      for (let i = 0; i < 6; i++) await credit();
      expect(await use().ctx.webhookSender.sendDue()).toBe(6);
      expect((await rows(hook.id)).every((r) => r.status === 'delivered')).toBe(true);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(6);
    });

    it('puts back, unattempted, a claimed delivery whose subscription was disabled before the attempt', async () => {
      const hook = await subscribe();
      await credit();
      const [claimed] = await use().ctx.webhookSender.claimDue(1);
      await use().ctx.webhooks.update(hook.id, { enabled: false }, 'admin');
      expect(await use().ctx.webhookSender.attempt(claimed)).toBeNull();
      expect(receiver.received).toHaveLength(0);
      expect(await rows(hook.id)).toEqual([expect.objectContaining({ status: 'pending', next_attempt_at: null, claim: null })]);
      expect(Number((await rows(hook.id))[0].attempts)).toBe(0);
    });

    it('records nothing for an attempt another sender took over meanwhile', async () => {
      const hook = await subscribe();
      await credit();
      const [first] = await use().ctx.webhookSender.claimDue(1);
      // A redelivery takes the delivery over (a new claim) and records its own attempt.
      expect(await use().ctx.webhooks.redeliver(first.id, 'admin')).toMatchObject({ status: 'delivered', attempts: 1 });
      receiver.fallback = 500;
      expect(await use().ctx.webhookSender.attempt(first)).toBeNull();
      expect(receiver.received).toHaveLength(2);
      expect(await rows(hook.id)).toEqual([expect.objectContaining({ status: 'delivered', claim: null, last_error: null })]);
      expect((await use().ctx.webhooks.get(hook.id)).failure_count).toBe(0);
    });

    it('counts a secret that no longer opens, and a redirect, as failed attempts', async () => {
      const hook = await subscribe();
      receiver.answers.push(302);
      await credit();
      await use().ctx.webhookSender.sendDue();
      expect((await rows(hook.id))[0]).toMatchObject({ status: 'failed', last_error: 'The receiver answered 302 (redirects are not followed).' });
      await use().ctx.db.execute('UPDATE webhooks SET secret = ? WHERE id = ?', ['e1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', hook.id]);
      await credit();
      await use().ctx.webhookSender.sendDue();
      const [, second] = await rows(hook.id);
      expect(second.status).toBe('failed');
      expect(second.last_error).toMatch(/cannot be decrypted/);
      expect(receiver.received).toHaveLength(1);
    });

    it('writes job.finished with the job as it ended', async () => {
      const hook = await subscribe(['job.finished']);
      const job = await use().ctx.jobs.enqueue('maintenance.prune', {}, 'test');
      await new JobRunner({ ctx: use().ctx, jobs: use().ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      const [row] = await use().ctx.db.select<{ payload: string }>('SELECT payload FROM webhook_deliveries WHERE webhook_id = ?', [hook.id]);
      expect(JSON.parse(row.payload)).toMatchObject({
        type: 'job.finished',
        data: { job: { id: job.id, type: 'maintenance.prune', status: 'done', actor: 'test' } },
      });
    });

    it('writes postback.rejected for a refused postback, and no parameters', async () => {
      const { ctx } = use();
      const hook = await subscribe(['postback.rejected']);
      await ctx.networks.saveCustom('hooknet', shopnetDefinition(), 'test');
      await ctx.networks.rotatePostbackSecret('hooknet', 'test');
      await ctx.networks.setPostbacks('hooknet', true, 'test');
      const server = await testServer(ctx);
      try {
        const res = await getPostback(server, 'hooknet', query({ token: 'x'.repeat(43), transaction_id: 'HOOK-1' }));
        expect(res.status).toBe(401);
      } finally {
        await server.stop();
      }
      const [row] = await ctx.db.select<{ payload: string }>('SELECT payload FROM webhook_deliveries WHERE webhook_id = ?', [hook.id]);
      const body = JSON.parse(row.payload);
      expect(body).toMatchObject({ type: 'postback.rejected', data: { network: 'hooknet', code: 'svc_postback_unauthorized', test: false } });
      expect(body.data).not.toHaveProperty('params');
      expect(row.payload).not.toContain('x'.repeat(43));
    });
  },
  { 'webhooks.concurrency': 2, 'webhooks.poll_interval_ms': 50, 'postbacks.enabled': true },
);
