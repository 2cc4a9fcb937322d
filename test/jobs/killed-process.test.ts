// Jobs survive a killed process: real children of the built binary (`cashtrack jobs run-pending`)
// run a job against this file's database and the Admitad fixture server; one is SIGKILLed
// mid-job (no chance to give the job back), and another process takes the job over once the dead
// one's lease expires and finishes it from the checkpoint. What the checkpoint design promises:
// nothing before the last checkpoint is done again (an advertiser sync does not even fetch it
// again); what was in flight at the kill (the page being fetched or recorded) is done again,
// idempotently.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { toDate, toInt } from '../../src/db/values.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import type { RecordedRequest } from '../fixtures/networks/common.js';
import { BinaryRunner, requireCurrentBuild, type Child } from '../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/jobs.js';

const DAY = 86_400_000;
/**
 * The runners' settings: a short lease (renewed every third of it), quick polling. The lease is
 * short so a takeover waits for little; no step of a test races it (see `holdLease`).
 */
const LEASE_SECONDS = 2;
const runnerEnv = { CASHTRACK_JOBS_LEASE_SECONDS: String(LEASE_SECONDS), CASHTRACK_JOBS_POLL_INTERVAL_MS: '50' };

/** A job's row as the runners leave it, lease and checkpoint included (the API shows neither). */
async function jobRow(ctx: Context, id: number) {
  const [r] = await ctx.db.select<Record<string, unknown>>(
    'SELECT status, attempts, progress_done, lease_owner, lease_expires_at, heartbeat_at, started_at, checkpoint FROM jobs WHERE id = ?',
    [id],
  );
  return {
    status: String(r.status),
    attempts: toInt(r.attempts),
    progressDone: toInt(r.progress_done),
    owner: r.lease_owner === null ? null : String(r.lease_owner),
    expiresAt: toDate(r.lease_expires_at),
    heartbeatAt: toDate(r.heartbeat_at),
    startedAt: toDate(r.started_at),
    checkpoint: r.checkpoint === null ? null : JSON.parse(String(r.checkpoint)),
  };
}

/** `fn`'s value once truthy; fails at once, with the child's output, if the child has died meanwhile. */
function whileAlive<T>(child: Child, fn: () => Promise<T | null | false>, what: string): Promise<T> {
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

const offsetsOf = (requests: RecordedRequest[], path: string) => requests.filter((r) => r.path.startsWith(path)).map((r) => Number(r.query.get('offset')));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const count = async (ctx: Context, sql: string) => toInt((await ctx.db.select<{ n: unknown }>(sql))[0].n);

for (const dialect of dialects) {
  describe(`jobs survive a killed process [${dialect}]`, () => {
    let t: TestContext;
    let children: BinaryRunner;
    let fixture: AdmitadFixture | undefined;

    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      children = new BinaryRunner(t.db, t.config.secret);
    });
    beforeEach(async () => {
      // Each test's runners see its own job only.
      await t.ctx.db.execute('DELETE FROM jobs');
    });
    afterEach(async () => {
      await children.killAll();
      await fixture?.close();
      fixture = undefined;
    });
    afterAll(async () => {
      await children?.killAll();
      await destroyTestContext(t);
    });

    /** Waits until the dead process's lease has run out (by the clock the runners compare it with). */
    const leaseExpiry = (expiresAt: Date) =>
      waitFor(() => Date.now() > expiresAt.getTime() + 20, expiresAt.getTime() - Date.now() + 10_000, 'the lease to expire');
    /**
     * Runs `fn` while the dead process's lease still holds, however slow this machine is: the
     * lease is set an hour ahead (as a heartbeat just before the kill could have left it), then
     * put back, so the takeover afterwards is still decided by the real expiry.
     */
    const holdLease = async <T>(id: number, expiresAt: Date, fn: () => Promise<T>): Promise<T> => {
      await t.ctx.db.execute('UPDATE jobs SET lease_expires_at = ? WHERE id = ?', [new Date(Date.now() + 3_600_000), id]);
      try {
        return await fn();
      } finally {
        await t.ctx.db.execute('UPDATE jobs SET lease_expires_at = ? WHERE id = ?', [expiresAt, id]);
      }
    };

    it('takes over an advertiser sync killed mid-way once its lease has expired, and finishes it without fetching stored pages again', async () => {
      const { ctx } = t;
      const N = 3000;
      const PAGE = 100;
      const HELD = 12;
      const LIST = '/advcampaigns/website/';
      const env = runnerEnv;
      fixture = await startAdmitadFixture({ advertisers: N, maxPageSize: PAGE, pageDelayMs: 25 });
      await ctx.networks.configure('admitad', { ...fixture.settings } as Record<string, string>, 'test');
      // The network never answers page HELD to the first process: that is where it is killed.
      fixture.fault({ kind: 'hang', path: LIST, query: { offset: String(HELD * PAGE) } });
      const job = await ctx.jobs.enqueue('advertisers.sync', { network: 'admitad' }, 'test');

      const first = children.start(['jobs', 'run-pending', '--json'], env);
      await whileAlive(
        first,
        async () => {
          const row = await jobRow(ctx, job.id);
          // HELD pages stored and checkpointed, the next one asked for, and the lease renewed by a heartbeat.
          return (
            row.checkpoint?.value?.current?.counts?.pages === HELD &&
            row.heartbeatAt! > row.startedAt! &&
            offsetsOf(fixture!.requests, LIST).includes(HELD * PAGE)
          );
        },
        `the sync to wait for page ${HELD}`,
      );
      first.process.kill('SIGKILL');
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

      const dead = await jobRow(ctx, job.id);
      expect(dead).toMatchObject({ status: 'running', attempts: 1, progressDone: HELD * PAGE });
      expect(dead.owner).toContain(`:${first.pid}:`);
      // The lease runs one lease length past the last heartbeat.
      expect(dead.expiresAt!.getTime() - dead.heartbeatAt!.getTime()).toBe(LEASE_SECONDS * 1000);
      expect(dead.checkpoint.value).toEqual({
        done: {},
        current: {
          network: 'admitad',
          sync: 1,
          next: String(HELD * PAGE),
          counts: { pages: HELD, seen: HELD * PAGE, created: HELD * PAGE, updated: 0, unchanged: 0, deactivated: 0, failed: 0 },
        },
      });
      expect(await count(ctx, "SELECT COUNT(*) AS n FROM advertisers WHERE module = 'admitad'")).toBe(HELD * PAGE);
      expect(offsetsOf(fixture.requests, LIST)).toEqual(range(0, HELD + 1).map((p) => p * PAGE));
      const byFirst = fixture.requests.length;

      // A second process while the lease holds: the job is not its to take.
      await holdLease(job.id, dead.expiresAt!, async () => {
        const early = children.start(['jobs', 'run-pending', '--json'], env);
        expect((await early.finished()).code, early.stderr).toBe(0);
        expect(JSON.parse(early.stdout)).toEqual([]);
        const held = await jobRow(ctx, job.id);
        expect({ ...held, expiresAt: dead.expiresAt }).toEqual(dead);
      });
      expect(await jobRow(ctx, job.id)).toEqual(dead);
      expect(fixture.requests.length).toBe(byFirst);

      // Once it has expired, the next process takes the job over and finishes it.
      await leaseExpiry(dead.expiresAt!);
      const second = children.start(['jobs', 'run-pending', '--json'], env);
      expect((await second.finished(60_000)).code, second.stderr).toBe(0);
      const [finished, ...others] = JSON.parse(second.stdout) as Record<string, unknown>[];
      expect(others).toEqual([]);
      expect(finished).toMatchObject({
        id: job.id,
        status: 'done',
        attempts: 2,
        error: null,
        progress: { total: N, done: N, failed: 0 },
        result: { networks: { admitad: { pages: N / PAGE, seen: N, created: N, updated: 0, deactivated: 0, failed: 0 } } },
      });
      const after = await jobRow(ctx, job.id);
      expect(after.owner).toContain(`:${second.pid}:`);
      expect(after.owner).not.toBe(dead.owner);

      // Every advertiser once, all from the one sync the dead process started.
      const rows = await ctx.db.select<{ advertiser: unknown; last_seen_sync: unknown; status: unknown }>(
        "SELECT advertiser, last_seen_sync, status FROM advertisers WHERE module = 'admitad'",
      );
      expect(rows).toHaveLength(N);
      expect(new Set(rows.map((r) => String(r.advertiser)))).toEqual(new Set(range(0, N).map((i) => String(6000 + i))));
      expect(rows.filter((r) => toInt(r.last_seen_sync) !== 1 || r.status !== 'active')).toEqual([]);
      expect((await ctx.networks.get('admitad')).last_sync_result).toMatchObject({ advertisers: { created: N, updated: 0, deactivated: 0, failed: 0 } });

      // The resumed run asked for the page in flight at the kill and the ones after it, each once:
      // the pages stored before the checkpoint were not fetched again.
      expect(offsetsOf(fixture.requests.slice(byFirst), LIST)).toEqual(range(HELD, N / PAGE).map((p) => p * PAGE));

      // Taken over by the clock, not before: the takeover is logged after the dead lease's expiry.
      const { items } = await ctx.logger.list({ source: 'jobs', search: `Job ${job.id} (advertisers.sync) taken over`, page: 1, per_page: 5 });
      expect(items).toHaveLength(1);
      expect(items[0].context).toMatchObject({ attempt: 2, owner: after.owner });
      expect(new Date(items[0].time).getTime()).toBeGreaterThanOrEqual(dead.expiresAt!.getTime());
    }, 90_000);

    it('takes over an order poll killed in the middle of a page, and records every order and ledger entry once', async () => {
      const { ctx } = t;
      const N = 1000;
      const PAGE = 500;
      const env = runnerEnv;
      const now = Date.now();
      fixture = await startAdmitadFixture({ actions: N, actionsFrom: new Date(now - 10 * DAY), actionsTo: new Date(now - DAY), pageDelayMs: 25 });
      await ctx.networks.configure('admitad', { ...fixture.settings } as Record<string, string>, 'test');
      // The fixture's actions credit sub ids u-000000 .. u-000049.
      for (let i = 0; i < 50; i++) await ctx.users.create({ login: `u-${String(i).padStart(6, '0')}`, email: `u${i}@example.com` });
      const approved = fixture.actions.filter((a) => a.status === 'approved').length;
      expect(approved).toBeGreaterThan(0);
      const job = await ctx.jobs.enqueue('orders.poll', { network: 'admitad', since: new Date(now - 11 * DAY).toISOString() }, 'test');

      const first = children.start(['jobs', 'run-pending', '--json'], env);
      const orders = () => count(ctx, "SELECT COUNT(*) AS n FROM orders WHERE network = 'admitad'");
      // Killed part-way through the second page: some of its orders recorded (one by one, or a
      // batch of them), its checkpoint not saved.
      await whileAlive(
        first,
        async () => {
          const seen = (await jobRow(ctx, job.id)).checkpoint?.value?.current?.counts?.seen ?? 0;
          const recorded = await orders();
          return seen === PAGE && recorded > seen && recorded < 2 * PAGE;
        },
        'the poll to be part-way through a page',
      );
      first.process.kill('SIGKILL');
      await first.exited;

      const dead = await jobRow(ctx, job.id);
      expect(dead).toMatchObject({ status: 'running', attempts: 1 });
      const checkpointed: number = dead.checkpoint.value.current.counts.seen;
      const redone = (await orders()) - checkpointed;
      expect(redone, 'killed part-way through a page').toBeGreaterThan(0);

      await leaseExpiry(dead.expiresAt!);
      const second = children.start(['jobs', 'run-pending', '--json'], env);
      expect((await second.finished(60_000)).code, second.stderr).toBe(0);
      const [finished, ...others] = JSON.parse(second.stdout) as Record<string, unknown>[];
      expect(others).toEqual([]);
      // The orders recorded after the checkpoint came again and changed nothing.
      expect(finished).toMatchObject({
        id: job.id,
        status: 'done',
        attempts: 2,
        result: { networks: { admitad: { pages: N / PAGE, seen: N, created: N - redone, duplicate: redone, updated: 0, failed: 0 } } },
      });

      expect(await orders()).toBe(N);
      expect(await count(ctx, "SELECT COUNT(DISTINCT transaction_id) AS n FROM orders WHERE network = 'admitad'")).toBe(N);
      expect(await count(ctx, "SELECT COUNT(*) AS n FROM orders WHERE network = 'admitad' AND status = 'approved'")).toBe(approved);
      // One cashback credit per approved order, none twice, and balances that add up.
      expect(await count(ctx, "SELECT COUNT(*) AS n FROM ledger_entries WHERE type = 'cashback'")).toBe(approved);
      expect(await ctx.db.select('SELECT order_id FROM ledger_entries GROUP BY order_id, type HAVING COUNT(*) > 1')).toEqual([]);
      expect(await ctx.ledger.verify()).toEqual([]);
    }, 90_000);
  });
}
