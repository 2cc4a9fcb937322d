// An Idempotency-Key survives a killed process: real children of the built binary. A request (or a
// command) with a key is held inside its transaction, right after claiming the key (the test hook
// CASHTRACK_TEST_HOLD_IN_TRANSACTION), and the process is SIGKILLed there. Its transaction dies
// with its connection, so the key is free at once: a retry with the same key, sent to daemons
// started afterwards, is answered within seconds (not after a claim's timeout) and applied once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toInt } from '../../../src/db/values.js';
import { BinaryRunner, requireCurrentBuild, type Child } from '../../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../../helpers/context.js';
import { createActor, NS, type Actor } from '../../helpers/http.js';
import { waitFor } from '../../helpers/jobs.js';

/** What the issue asks of a retry after a crash: a definite answer within 5 s. */
const ANSWER_WITHIN_MS = 5_000;

/** `fn`'s value once truthy; fails at once, with the child's output, if the child has died meanwhile. */
function whileAlive<T>(child: Child, fn: () => T | null | false | undefined, what: string): Promise<T> {
  return waitFor(
    async () => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) {
        throw new Error(
          `cashtrack exited (${child.process.signalCode ?? child.process.exitCode}) before ${what}\nstdout: ${child.stdout.slice(-2000)}\nstderr: ${child.stderr.slice(-2000)}`,
        );
      }
      return fn();
    },
    30_000,
    what,
  );
}

for (const dialect of dialects) {
  describe(`an Idempotency-Key survives a killed process [${dialect}]`, () => {
    let t: TestContext;
    let children: BinaryRunner;
    let admin: Actor;
    let seq = 0;

    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      children = new BinaryRunner(t.db, t.config.secret);
      admin = await createActor(t.ctx, 'administrator');
    });
    afterEach(async () => {
      await children.killAll();
    });
    afterAll(async () => {
      await children?.killAll();
      await destroyTestContext(t);
    });

    /** `cashtrack serve` on a free port (no job runner), once it listens. */
    const serve = async (env: Record<string, string> = {}) => {
      const child = children.start(['serve', '--port', '0'], { CASHTRACK_JOBS_CONCURRENCY: '0', ...env });
      const url = await whileAlive(child, () => /listening on (http:\/\/\S+)/.exec(child.stderr)?.[1], 'the daemon to listen');
      return { child, url };
    };
    const adjust = (url: string, key: string, body: Record<string, unknown>) =>
      fetch(`${url}${NS}/ledger/adjustments`, {
        method: 'POST',
        headers: { authorization: admin.authorization, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const member = async () => (await t.ctx.users.create({ login: `killed${++seq}`, email: `killed${seq}@example.com` })).id;
    const entries = async (id: number) =>
      toInt((await t.ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM ledger_entries WHERE member_id = ?', [id]))[0].n);
    const keyRows = async (key: string) =>
      toInt((await t.ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM idempotency_keys WHERE idem_key = ?', [key]))[0].n);

    it('answers a retry sent to restarted daemons within 5 s after the daemon holding the key was SIGKILLed mid-transaction, and applies it once', async () => {
      const id = await member();
      const key = `killed-daemon-${id}`;
      const body = { member_id: id, type: 'credit', amount: '7.00', note: 'ticket 9' };

      const first = await serve({ CASHTRACK_TEST_HOLD_IN_TRANSACTION: 'ledger.adjust' });
      const lost = adjust(first.url, key, body).then(
        (res) => `answered ${res.status}`,
        () => 'no answer',
      );
      await whileAlive(first.child, () => first.child.stderr.includes('test hold: ledger.adjust is held inside its transaction'), 'the request to be held');
      first.child.process.kill('SIGKILL');
      expect(await first.child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(await lost).toBe('no answer');
      // Nothing of the killed request survives: no entry, and no claim left on the key.
      expect(await entries(id)).toBe(0);
      expect(await keyRows(key)).toBe(0);

      // Two daemons are back; the client retries on both at once.
      const [a, b] = await Promise.all([serve(), serve()]);
      const sent = Date.now();
      const answers = await Promise.all(
        [a.url, b.url].map(async (url) => {
          const res = await adjust(url, key, body);
          return {
            status: res.status,
            replayed: res.headers.get('idempotent-replayed'),
            body: (await res.json()) as { entry: { id: number }; balance: { available: string } },
            at: Date.now() - sent,
          };
        }),
      );
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
        expect(answer.at).toBeLessThan(ANSWER_WITHIN_MS);
      }
      // One of them applied it now, the other waited for it and replays its answer.
      expect(answers.map((x) => x.replayed).sort()).toEqual(['true', null].sort());
      expect(answers[0].body).toEqual(answers[1].body);
      expect(answers[0].body.balance.available).toBe('7.00');
      expect(await entries(id)).toBe(1);
      expect((await t.ctx.ledger.balanceOf(id, 'USD')).available).toBe('7.00');
      expect(await t.ctx.ledger.verify()).toEqual([]);
    }, 90_000);

    it('runs a command again at once after the process running it was SIGKILLed mid-transaction, and applies it once', async () => {
      const id = await member();
      const key = `killed-cli-${id}`;
      const args = ['ledger', 'adjust', String(id), 'credit', '3.00', '--note', 'ticket 9', '--idempotency-key', key, '--json'];

      const first = children.start(args, { CASHTRACK_TEST_HOLD_IN_TRANSACTION: 'ledger.adjust' });
      await whileAlive(first, () => first.stderr.includes('test hold: ledger.adjust is held inside its transaction'), 'the command to be held');
      first.process.kill('SIGKILL');
      await first.exited;
      expect(await entries(id)).toBe(0);

      const sent = Date.now();
      const again = children.start(args);
      expect((await again.finished()).code, again.stderr).toBe(0);
      expect(Date.now() - sent).toBeLessThan(ANSWER_WITHIN_MS);
      expect(JSON.parse(again.stdout)).toMatchObject({ entry: { amount: '3.00' }, balance: { available: '3.00' } });
      const replay = children.start(args);
      expect((await replay.finished()).code, replay.stderr).toBe(0);
      expect(JSON.parse(replay.stdout)).toEqual(JSON.parse(again.stdout));
      expect(await entries(id)).toBe(1);
      expect((await t.ctx.ledger.balanceOf(id, 'USD')).available).toBe('3.00');
    }, 90_000);
  });
}
