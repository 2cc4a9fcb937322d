import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../helpers/receiver.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack webhooks [${dialect}]`, () => {
    let db: TestDatabase;
    let receiver: Receiver;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      receiver = await startReceiver();
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      expect((await runCli(['users', 'create', 'hookee', '--email', 'hookee@example.com'], { db })).code).toBe(0);
    });
    afterAll(async () => {
      await receiver.close();
      await db.drop();
    });

    it('adds a subscription (secret printed once), lists, shows, updates and removes it', async () => {
      const added = await runCli(
        ['webhooks', 'add', receiver.url, '--event', 'ledger.entry_posted', '--event', 'payout.created', '--description', 'books', '--json'],
        { db },
      );
      expect(added.code).toBe(0);
      const hook = added.json<Json>();
      expect(hook).toMatchObject({ url: receiver.url, events: ['ledger.entry_posted', 'payout.created'], description: 'books', enabled: true, actor: 'cli' });
      expect(hook.secret).toMatch(/^whsec_/);
      const text = await runCli(['webhooks', 'add', receiver.url, '--event', '*', '--disabled'], { db });
      expect(text.stdout).toMatch(/^secret\s+whsec_\S+\n\s+\(shown once/m);
      expect(text.stdout).toMatch(/^enabled\s+no/m);

      const list = await runCli(['webhooks', 'list', '--enabled', '--json'], { db });
      expect(list.json<Json[]>().map((w) => w.id)).toEqual([hook.id]);
      const table = await runCli(['webhooks', 'list'], { db });
      expect(table.stdout).toMatch(/ID\s+URL\s+EVENTS\s+ENABLED/);
      expect(table.stdout).toContain('2 webhook(s)');
      const show = await runCli(['webhooks', 'show', String(hook.id)], { db });
      expect(show.stdout).toMatch(/^events\s+ledger\.entry_posted, payout\.created$/m);
      expect(show.stdout).not.toContain('whsec_');

      const updated = await runCli(['webhooks', 'update', String(hook.id), '--event', 'job.finished', '--disable', '--json'], { db });
      expect(updated.json<Json>()).toMatchObject({ events: ['job.finished'], enabled: false, disabled_reason: 'Disabled by cli.' });
      const rotated = await runCli(['webhooks', 'update', String(hook.id), '--enable', '--rotate-secret'], { db });
      expect(rotated.stdout).toMatch(/^secret\s+whsec_/m);
      expect((await runCli(['webhooks', 'update', String(hook.id)], { db })).code).toBe(2);
      expect((await runCli(['webhooks', 'update', String(hook.id), '--enable', '--disable'], { db })).code).toBe(2);

      const refused = await runCli(['webhooks', 'remove', String(hook.id)], { db });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/add --yes/);
      const removed = await runCli(['webhooks', 'remove', String(hook.id), '--yes'], { db });
      expect(removed.stdout).toBe(`webhook ${hook.id} (${receiver.url}) deleted\n`);
      const gone = await runCli(['webhooks', 'show', String(hook.id), '--json'], { db });
      expect(gone.code).toBe(1);
      expect(JSON.parse(gone.stderr)).toMatchObject({ code: 'svc_webhook_not_found' });
    });

    it('tests a subscription from the command line, lists its deliveries and redelivers one', async () => {
      const hook = (await runCli(['webhooks', 'add', receiver.url, '--event', 'ledger.entry_posted', '--json'], { db })).json<Json>();
      const ping = await runCli(['webhooks', 'test', String(hook.id), '--json'], { db });
      expect(ping.code).toBe(0);
      expect(ping.json<Json>()).toMatchObject({ event: 'ping', status: 'delivered', last_status: 204 });
      expect(verifyStandardWebhook(hook.secret, receiver.received.at(-1)!, Date.now() / 1000)).toBe(true);

      // An event made by a command waits in the outbox for a daemon's sender.
      expect((await runCli(['ledger', 'adjust', 'hookee', 'credit', '4.00', '--note', 'queued'], { db })).code).toBe(0);
      const log = await runCli(['webhooks', 'deliveries', String(hook.id), '--json'], { db });
      const [queued, pinged] = log.json<Json[]>();
      expect(queued).toMatchObject({ event: 'ledger.entry_posted', status: 'pending', attempts: 0 });
      expect(pinged).toMatchObject({ event: 'ping', status: 'delivered' });
      const table = await runCli(['webhooks', 'deliveries', String(hook.id), '--status', 'pending'], { db });
      expect(table.stdout).toContain('1 delivery');

      const shown = await runCli(['webhooks', 'delivery', queued.id], { db });
      expect(shown.stdout).toMatch(/^payload\s+\{"type":"ledger\.entry_posted"/m);
      const sent = await runCli(['webhooks', 'redeliver', queued.id], { db });
      expect(sent.code).toBe(0);
      expect(sent.stdout).toMatch(/^status\s+delivered$/m);
      expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(queued.id);

      receiver.answers.push(500);
      const failed = await runCli(['webhooks', 'test', String(hook.id)], { db });
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/^response\s+500$/m);
      expect(failed.stderr).toBe('');
      const unknown = await runCli(['webhooks', 'add', receiver.url, '--event', 'nope'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc_webhook_event_unknown: Unknown event nope: /);
      expect((await runCli(['webhooks', 'redeliver', 'msg_nope'], { db })).code).toBe(1);
    });
  });
}
