// The checks of "several daemons on one database", shared by the MariaDB/SQLite run
// (test/e2e/several-daemons.test.ts) and the Galera run (test/galera/), where each daemon talks to
// its own node. A `Cluster` is three (or more) real daemons and an in-process context on the same
// database, which stands for the administrator's CLI and reads what the daemons wrote.
import { expect } from 'vitest';
import type { Context } from '../../src/context.js';
import { toInt } from '../../src/db/values.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { localUtc } from '../fixtures/networks/common.js';
import type { BinaryRunner } from './binary.js';
import { fillMacros } from './daemon.js';
import { basic, ownerPid, startDaemonProcess, type Answer, type DaemonProcess } from './daemon-processes.js';
import { NS } from './http.js';

export interface Cluster {
  ctx: Context;
  runner: BinaryRunner;
  daemons: DaemonProcess[];
  /** The environment daemon `i` is started with (its database URL on Galera); a replacement gets the same. */
  envFor(i: number): Record<string, string>;
}

/** What every daemon of these tests is started with on top of its database. */
export const DAEMON_ENV = {
  CASHTRACK_POSTBACKS_ENABLED: 'true',
  // Each check sends from an address of its own (X-Forwarded-For), so their throttle counters are apart.
  CASHTRACK_TRUST_PROXY: 'true',
  // A short lease so a killed daemon's job is taken over within seconds; quick polling.
  CASHTRACK_JOBS_LEASE_SECONDS: '2',
  CASHTRACK_JOBS_POLL_INTERVAL_MS: '50',
  CASHTRACK_THROTTLE_MAX_FAILURES_PER_ADDRESS: '6',
  CASHTRACK_THROTTLE_WINDOW_SECONDS: '600',
};
export const MAX_FAILURES = 6;

const count = async (ctx: Context, sql: string, params: unknown[] = []) => toInt((await ctx.db.select<{ n: unknown }>(sql, params))[0].n);

/** Polls `fn` every 100 ms (these reads go to a database three daemons are busy with). */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An administrator with an application password, made through the services (as the CLI does). */
export async function administrator(ctx: Context, login: string): Promise<{ authorization: string; uuid: string; password: string }> {
  const user = await ctx.users.create({ login, email: `${login}@example.com`, role: 'administrator' });
  const { uuid, password } = await ctx.appPasswords.create(user, `${login} key`);
  return { authorization: basic(login, password), uuid, password };
}

/** Kills `d` with SIGKILL (no chance to finish anything) and starts a replacement in its slot. */
export async function killAndReplace(c: Cluster, i: number): Promise<DaemonProcess> {
  const dead = c.daemons[i];
  dead.child.process.kill('SIGKILL');
  expect(await dead.child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  c.daemons[i] = await startDaemonProcess(c.runner, c.envFor(i));
  return dead;
}

/** Enqueues `n` jobs from outside (as `cashtrack jobs enqueue` does) and checks each ran exactly once, in one of the daemons. */
export async function checkJobsRunOnce(c: Cluster, n = 24): Promise<void> {
  const { ctx } = c;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push((await ctx.jobs.enqueue('maintenance.prune', { log_retention_days: 30 + i }, 'test')).id);
  const list = ids.join(', ');
  await eventually(
    async () => (await count(ctx, `SELECT COUNT(*) AS n FROM jobs WHERE id IN (${list}) AND status IN ('done', 'failed', 'cancelled')`)) === n,
    `${n} jobs to finish`,
  );
  const rows = await ctx.db.select<{ id: unknown; status: string; attempts: unknown; lease_owner: string | null; error: string | null }>(
    `SELECT id, status, attempts, lease_owner, error FROM jobs WHERE id IN (${list}) ORDER BY id`,
  );
  const pids = new Set(c.daemons.map((d) => d.pid));
  // A claim increments `attempts`: a job claimed twice would show 2.
  expect(rows.map((r) => ({ id: toInt(r.id), status: r.status, attempts: toInt(r.attempts), error: r.error }))).toEqual(
    ids.map((id) => ({ id, status: 'done', attempts: 1, error: null })),
  );
  for (const r of rows) expect(pids.has(ownerPid(r.lease_owner!)), `owner ${r.lease_owner}`).toBe(true);
  // The daemons competed for them (each polls every 50 ms): more than one took part.
  expect(new Set(rows.map((r) => r.lease_owner)).size).toBeGreaterThan(1);
  // Each ran once: one "started" and one "done" entry per job in the shared log (entries are written shortly after).
  const runs = (what: string) =>
    ctx.db.select<{ message: string; n: unknown }>(`SELECT message, COUNT(*) AS n FROM logs WHERE source = 'jobs' AND message LIKE ? GROUP BY message`, [
      `Job % (maintenance.prune) ${what}`,
    ]);
  const mine = (rows: { message: string; n: unknown }[]) => rows.filter((r) => ids.includes(Number(/^Job (\d+) /.exec(r.message)?.[1])));
  await eventually(async () => mine(await runs('done')).length === n, "the jobs' log entries");
  for (const what of ['started', 'done']) {
    const seen = mine(await runs(what));
    expect(seen).toHaveLength(n);
    expect(
      seen.filter((r) => toInt(r.n) !== 1),
      `jobs ${what} more than once`,
    ).toEqual([]);
  }
}

/** An application password every daemon has cached is refused by each on its next request once revoked (by the CLI, another process). */
export async function checkRevocation(c: Cluster): Promise<void> {
  const ops = await administrator(c.ctx, 'ops-revoke');
  const headers = { authorization: ops.authorization, 'x-forwarded-for': '192.0.2.10' };
  // Twice each: the second answer comes from the daemon's credential cache.
  for (const d of c.daemons) for (let i = 0; i < 2; i++) expect((await d.request('GET', `${NS}/jobs?per_page=1`, { headers })).status).toBe(200);
  const revoke = c.runner.start(['app-passwords', 'revoke', 'ops-revoke', ops.uuid], c.envFor(0));
  expect((await revoke.finished()).code, revoke.stderr).toBe(0);
  for (const d of c.daemons) {
    const res = await d.request('GET', `${NS}/jobs?per_page=1`, { headers });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 401, code: 'incorrect_password' });
  }
}

/** A session made on one daemon works on the others, a nonce from any daemon is good on all, and a logout on one ends it everywhere. */
export async function checkSessions(c: Cluster): Promise<void> {
  await c.ctx.users.create({ login: 'browser', email: 'browser@example.com', role: 'administrator', password: 'long enough pw' });
  const [a, b, z] = [c.daemons[0], c.daemons[1], c.daemons[c.daemons.length - 1]];
  const from = { 'x-forwarded-for': '192.0.2.20' };
  const login = await a.request('POST', '/login', { json: { login: 'browser', password: 'long enough pw' }, headers: from });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  const cookie = login.headers.getSetCookie()[0].split(';')[0];
  const nonce: string = login.body.nonce;
  const get = (d: DaemonProcess, n: string) => d.request('GET', `${NS}/jobs?per_page=1`, { headers: { ...from, cookie, 'x-wp-nonce': n } });
  for (const d of c.daemons) expect((await get(d, nonce)).status).toBe(200);
  const fresh = await z.request('GET', '/rest-nonce', { headers: { ...from, cookie } });
  expect(fresh.status).toBe(200);
  for (const d of c.daemons) expect((await get(d, String(fresh.body))).status).toBe(200);
  const out = await b.request('POST', '/logout', { headers: { ...from, cookie, 'x-wp-nonce': nonce } });
  expect(out.body).toMatchObject({ logged_out: true });
  for (const d of c.daemons) expect((await get(d, nonce)).status).toBe(401);
}

/** Failures through every daemon at once count together: exactly MAX_FAILURES checks in all, then 429 everywhere. */
export async function checkThrottle(c: Cluster): Promise<void> {
  // Each attempt with a password of its own: a daemon answers identical concurrent attempts with
  // one check (src/services/auth.ts), and the point here is how many checks are let through.
  const headers = (i: number) => ({ authorization: basic('nobody-at-all', `wrong password ${i}`), 'x-forwarded-for': '192.0.2.66' });
  const attempts = 5 * c.daemons.length;
  const answers: Answer[] = await Promise.all(
    Array.from({ length: attempts }, (_, i) => c.daemons[i % c.daemons.length].request('GET', `${NS}/jobs`, { headers: headers(i) })),
  );
  const by = (status: number) => answers.filter((r) => r.status === status);
  expect(answers.map((r) => r.status).sort()).toEqual([...Array(MAX_FAILURES).fill(401), ...Array(attempts - MAX_FAILURES).fill(429)]);
  for (const r of by(401)) expect(r.body.code).toBe('invalid_username');
  for (const r of by(429)) expect(r.body.code).toBe('svc_too_many_attempts');
  expect(await count(c.ctx, "SELECT failures AS n FROM auth_throttle WHERE kind = 'address' AND throttle_key = '192.0.2.66'")).toBe(MAX_FAILURES);
  // And the next attempt, on any daemon, is refused before any check.
  for (const [i, d] of c.daemons.entries()) expect((await d.request('GET', `${NS}/jobs`, { headers: headers(attempts + i) })).status).toBe(429);
}

/**
 * The daemon running a long job is SIGKILLed mid-job: once its lease has expired another daemon
 * takes the job over and finishes it from its checkpoint, every advertiser stored once.
 */
export async function checkKilledJob(c: Cluster): Promise<void> {
  const { ctx } = c;
  const N = 2000;
  const PAGE = 100;
  const HELD = 6;
  const LIST = '/advcampaigns/website/';
  const fixture: AdmitadFixture = await startAdmitadFixture({ advertisers: N, maxPageSize: PAGE, pageDelayMs: 10 });
  try {
    await ctx.networks.configure('admitad', { ...fixture.settings } as Record<string, string>, 'test');
    await ctx.networks.enable('admitad', 'test');
    // The network never answers page HELD the first time: the job waits there, and is killed there.
    fixture.fault({ kind: 'hang', path: LIST, query: { offset: String(HELD * PAGE) } });
    const job = await ctx.jobs.enqueue('advertisers.sync', { network: 'admitad' }, 'test');
    const held = await eventually(async () => {
      const [r] = await ctx.db.select<{ lease_owner: string | null; checkpoint: string | null }>('SELECT lease_owner, checkpoint FROM jobs WHERE id = ?', [
        job.id,
      ]);
      const pages = r.checkpoint ? JSON.parse(r.checkpoint)?.value?.current?.counts?.pages : 0;
      return pages === HELD && fixture.requests.some((q) => q.path.startsWith(LIST) && q.query.get('offset') === String(HELD * PAGE)) ? r.lease_owner : null;
    }, `the sync to wait for page ${HELD}`);
    const index = c.daemons.findIndex((d) => d.pid === ownerPid(held!));
    expect(index, `job owner ${held}`).toBeGreaterThanOrEqual(0);
    await killAndReplace(c, index);

    const done = await eventually(async () => {
      const j = await ctx.jobs.get(job.id);
      return ['done', 'failed', 'cancelled'].includes(j.status) ? j : null;
    }, 'the job to be taken over and finished');
    expect(done).toMatchObject({
      status: 'done',
      attempts: 2,
      error: null,
      result: { networks: { admitad: { pages: N / PAGE, seen: N, created: N, updated: 0, failed: 0 } } },
    });
    const [row] = await ctx.db.select<{ lease_owner: string }>('SELECT lease_owner FROM jobs WHERE id = ?', [job.id]);
    expect(row.lease_owner).not.toBe(held);
    expect(await count(ctx, "SELECT COUNT(*) AS n FROM advertisers WHERE module = 'admitad'")).toBe(N);
    expect(await count(ctx, "SELECT COUNT(DISTINCT advertiser) AS n FROM advertisers WHERE module = 'admitad'")).toBe(N);
  } finally {
    await fixture.close();
  }
}

/**
 * Postbacks stream into one daemon, which is SIGKILLed mid-stream: every postback it acknowledged
 * with 200 is in the database, and the ones it never answered, sent again to another daemon (as
 * the network retries), are recorded once.
 */
export async function checkKilledPostbacks(c: Cluster): Promise<void> {
  const { ctx } = c;
  // Admitad's postbacks need no API: the settings only have to be present.
  await ctx.networks.configure('admitad', { client_id: 'c', website_id: '1', client_secret: 's' }, 'test').catch(() => {});
  await ctx.networks.enable('admitad', 'test');
  const { secret } = await ctx.networks.rotatePostbackSecret('admitad', 'test');
  await ctx.networks.setPostbacks('admitad', true, 'test');
  const template = (await ctx.networks.get('admitad')).postbacks.template!;
  await ctx.users.create({ login: 'shopper-kill', email: 'shopper-kill@example.com' });
  const query = (i: number) =>
    `token=${encodeURIComponent(secret)}&${fillMacros(template, {
      action_id: String(900_000 + i),
      status: 'approved',
      order_id: `K-${i}`,
      order_sum: '100.00',
      payment_sum: '4.00',
      currency: 'USD',
      subid: 'shopper-kill',
      offer_id: '6000',
      time: localUtc(new Date(Date.now() - 3_600_000), ' '),
    })}`;
  const victim = c.daemons.length - 1;
  const target = c.daemons[victim];
  const TOTAL = 400;
  const acknowledged = new Set<number>();
  const unanswered = new Set<number>();
  let next = 0;
  let killed = false;
  // Four senders at once, like a network's workers; the kill comes once 60 are acknowledged.
  const sender = async () => {
    while (next < TOTAL) {
      const i = next++;
      if (killed) {
        unanswered.add(i);
        continue;
      }
      try {
        const res = await target.request('GET', `/postback/admitad?${query(i)}`, { headers: { 'x-forwarded-for': '198.51.100.7' } });
        if (res.status === 200) acknowledged.add(i);
        else throw new Error(`postback ${i}: ${res.status} ${JSON.stringify(res.body)}`);
      } catch (err) {
        if (!killed) throw err;
        unanswered.add(i);
      }
      if (acknowledged.size >= 60 && !killed) {
        killed = true;
        target.child.process.kill('SIGKILL');
      }
    }
  };
  await Promise.all([sender(), sender(), sender(), sender()]);
  expect(killed).toBe(true);
  // Dead already (a second SIGKILL does nothing): wait for it and put a new daemon in its place.
  await killAndReplace(c, victim);
  const recorded = async () =>
    new Set(
      (await ctx.db.select<{ transaction_id: string }>("SELECT transaction_id FROM orders WHERE network = 'admitad' AND transaction_id LIKE '9%'")).map(
        (r) => Number(r.transaction_id) - 900_000,
      ),
    );
  const before = await recorded();
  const lost = [...acknowledged].filter((i) => !before.has(i));
  expect(lost, 'acknowledged with 200 but not in the database').toEqual([]);

  // The network retries what got no answer, through the balancer: another daemon.
  const others = c.daemons.filter((_, i) => i !== victim);
  let k = 0;
  for (const i of unanswered) {
    const res = await others[k++ % others.length].request('GET', `/postback/admitad?${query(i)}`, { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  const after = await recorded();
  expect(after.size).toBe(TOTAL);
  expect(await count(ctx, "SELECT COUNT(*) AS n FROM orders WHERE network = 'admitad' AND transaction_id LIKE '9%'")).toBe(TOTAL);
  // One cashback credit per order, none twice, balances that add up.
  expect(await ctx.db.select("SELECT order_id FROM ledger_entries WHERE type = 'cashback' GROUP BY order_id HAVING COUNT(*) > 1")).toEqual([]);
  expect(
    await count(
      ctx,
      "SELECT COUNT(*) AS n FROM ledger_entries e JOIN orders o ON o.id = e.order_id WHERE e.type = 'cashback' AND o.network = 'admitad' AND o.transaction_id LIKE '9%'",
    ),
  ).toBe(TOTAL);
  expect(await ctx.ledger.verify()).toEqual([]);
}

/** Stops every daemon of `c` with SIGTERM (a clean stop) and starts new ones with `extra` on top of their environment. */
export async function restartAll(c: Cluster, extra: Record<string, string> = {}): Promise<void> {
  for (const d of c.daemons) d.child.process.kill('SIGTERM');
  for (const d of c.daemons) expect((await d.child.finished(60_000)).code, d.child.stderr).toBe(0);
  c.daemons = await Promise.all(c.daemons.map((_, i) => startDaemonProcess(c.runner, { ...c.envFor(i), ...extra })));
}

/**
 * Every daemon runs the maintenance_prune schedule every 2 seconds: each slot is claimed once
 * across them (one `schedule_runs` row, at most one job), whichever daemon wins it.
 */
export async function checkScheduleFiresOnce(c: Cluster, slots = 6): Promise<void> {
  const { ctx } = c;
  const rows = () =>
    ctx.db.select<{ slot: unknown; status: string; job_id: unknown; claimed_by: string }>(
      "SELECT slot, status, job_id, claimed_by FROM schedule_runs WHERE schedule = 'maintenance_prune' ORDER BY slot",
    );
  const before = (await rows()).length;
  await restartAll(c, {
    CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_ENABLED: 'true',
    CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_CRON: '*/2 * * * * *',
    CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_CATCH_UP: 'false',
  });
  const pids = new Set(c.daemons.map((d) => d.pid));
  try {
    await eventually(async () => (await rows()).length >= before + slots, `${slots} schedule slots`);
  } finally {
    // The other checks run without the schedule.
    await restartAll(c);
  }
  const runs = (await rows()).slice(before);
  // One row per slot (the unique key), each slot claimed by one of the three daemons.
  expect(new Set(runs.map((r) => String(r.slot))).size).toBe(runs.length);
  for (const r of runs) expect(pids.has(ownerPid(r.claimed_by)), `claimed by ${r.claimed_by}`).toBe(true);
  const queued = runs.filter((r) => r.status === 'queued');
  expect(queued.length).toBeGreaterThan(0);
  expect(runs.filter((r) => r.status !== 'queued' && r.status !== 'skipped')).toEqual([]);
  // No slot gave two jobs: each queued run has its own job, and the schedule made no other.
  const jobIds = queued.map((r) => toInt(r.job_id));
  expect(new Set(jobIds).size).toBe(queued.length);
  const allQueued = (await rows()).filter((r) => r.status === 'queued').map((r) => toInt(r.job_id));
  const made = await ctx.db.select<{ id: unknown }>("SELECT id FROM jobs WHERE type = 'maintenance.prune' AND actor = 'schedule:maintenance_prune'");
  expect(made.map((r) => toInt(r.id)).sort((a, b) => a - b)).toEqual(allQueued.sort((a, b) => a - b));
  const logged = await ctx.db.select<{ message: string; n: unknown }>(
    "SELECT message, COUNT(*) AS n FROM logs WHERE source = 'schedules' AND message LIKE 'Scheduled maintenance\\_prune queued job %' GROUP BY message",
  );
  expect(
    logged.filter((r) => toInt(r.n) !== 1),
    'a job announced twice',
  ).toEqual([]);
}
