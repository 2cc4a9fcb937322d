// `cashtrack serve --workers 2` as real processes under load: a worker killed with SIGKILL costs
// only the requests in flight on it and is replaced; a SIGHUP replaces every worker one at a time
// with no request failing; a revoked application password is refused by every worker at once.
// Each request opens a connection of its own, so the supervisor deals them to both workers in turn.
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryRunner, requireCurrentBuild, type Child } from '../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { NS } from '../helpers/http.js';
import { waitFor } from '../helpers/jobs.js';
import { administrator } from '../helpers/several-daemons.js';

interface Outcome {
  started: number;
  method: string;
  status: number | null;
  error: string | null;
}

/** One request on a connection of its own: its status, or the socket error that ended it. */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number | null; error: string | null }> {
  return new Promise((resolve) => {
    const req = httpRequest(new URL(path, url), { method, headers: { ...headers, connection: 'close' }, agent: false, timeout: 20_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? null, error: null }));
      res.on('error', (err) => resolve({ status: null, error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: null, error: err.code ?? err.message }));
    req.end(body);
  });
}

/** Eight clients in a loop until stopped: GETs of a list, and every fifth request a ledger credit. */
function load(url: string, authorization: string, memberId: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      const post = i % 5 === 4;
      const started = Date.now();
      const answer = post
        ? await send(
            url,
            'POST',
            `${NS}/ledger/adjustments`,
            { authorization, 'content-type': 'application/json' },
            JSON.stringify({ member_id: memberId, type: 'credit', amount: '0.01', note: `load ${c}-${i}` }),
          )
        : await send(url, 'GET', `${NS}/jobs?per_page=1`, { authorization });
      outcomes.push({ started, method: post ? 'POST' : 'GET', ...answer });
    }
  };
  const clients = Array.from({ length: 8 }, (_, c) => client(c));
  return {
    outcomes,
    async stop(): Promise<Outcome[]> {
      running = false;
      await Promise.all(clients);
      return outcomes;
    },
  };
}

/** The supervisor's JSON log lines (source `supervisor`) so far. */
function supervisorLog(child: Child): { time: string; message: string; context: Record<string, any> }[] {
  return child.stdout
    .split('\n')
    .filter((l) => l.includes('"source":"supervisor"'))
    .map((l) => JSON.parse(l));
}

const workerPids = (pid: number) =>
  execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter(Boolean)
    .sort();

const failed = (outcomes: Outcome[]) => outcomes.filter((o) => o.status === null || o.status >= 500);

for (const dialect of dialects) {
  describe(`cashtrack serve --workers 2 [${dialect}]`, () => {
    let t: TestContext;
    let runner: BinaryRunner;
    let supervisor: Child;
    let url: string;
    let admin: { authorization: string; uuid: string };
    let memberId: number;
    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      runner = new BinaryRunner(t.db, t.config.secret);
      admin = await administrator(t.ctx, 'ops-workers');
      memberId = (await t.ctx.users.create({ login: 'loaded', email: 'loaded@example.com', role: 'member' })).id;
      supervisor = runner.start(['serve', '--host', '127.0.0.1', '--port', '0', '--workers', '2'], { CASHTRACK_LOG_STDOUT: 'true' });
      url = await waitFor(
        () => {
          if (supervisor.process.exitCode !== null) throw new Error(`the supervisor exited before its workers listened\n${supervisor.stderr}`);
          return Promise.resolve(/cashtrack: 2 workers listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(supervisor.stderr)?.[1] ?? null);
        },
        60_000,
        'two workers to listen',
      );
    }, 90_000);
    afterAll(async () => {
      await runner?.killAll();
      await destroyTestContext(t);
    });

    it('loses only the requests in flight on a worker killed with SIGKILL, and replaces the worker', async () => {
      const before = workerPids(supervisor.pid);
      expect(before).toHaveLength(2);
      const running = load(url, admin.authorization, memberId);
      await new Promise((r) => setTimeout(r, 1_500));
      process.kill(before[0], 'SIGKILL');
      const replaced = await waitFor(
        () => Promise.resolve(supervisorLog(supervisor).find((l) => l.message === 'Worker replaced') ?? null),
        45_000,
        'the killed worker to be replaced',
      );
      await new Promise((r) => setTimeout(r, 1_000));
      const outcomes = await running.stop();
      const died = supervisorLog(supervisor).find((l) => l.message === 'Worker exited; starting another')!;
      expect(died.context).toMatchObject({ pid: before[0], signal: 'SIGKILL' });
      // A request that failed was sent before the supervisor knew its worker was dead: it was on that worker.
      const noticed = Date.parse(died.time);
      const lost = failed(outcomes);
      expect(lost.filter((o) => o.started > noticed)).toEqual([]);
      expect(lost.length).toBeLessThanOrEqual(8);
      expect(outcomes.filter((o) => o.status === 200 || o.status === 201).length).toBeGreaterThan(50);
      expect(outcomes.filter((o) => o.started > Date.parse(replaced.time)).length).toBeGreaterThan(0);
      const after = workerPids(supervisor.pid);
      expect(after).toHaveLength(2);
      expect(after).toContain(replaced.context.pid);
      expect(after).not.toContain(before[0]);
    }, 60_000);

    it('replaces both workers one at a time on SIGHUP with no failed or refused request', async () => {
      const before = workerPids(supervisor.pid);
      const running = load(url, admin.authorization, memberId);
      await new Promise((r) => setTimeout(r, 1_000));
      const logged = supervisorLog(supervisor).length;
      process.kill(supervisor.pid, 'SIGHUP');
      await waitFor(
        () =>
          Promise.resolve(
            supervisorLog(supervisor)
              .slice(logged)
              .some((l) => l.message === 'Reloaded'),
          ),
        60_000,
        'the reload',
      );
      await new Promise((r) => setTimeout(r, 500));
      const outcomes = await running.stop();
      expect(failed(outcomes)).toEqual([]);
      expect(outcomes.filter((o) => o.method === 'POST').every((o) => o.status === 201)).toBe(true);
      const replaced = supervisorLog(supervisor)
        .slice(logged)
        .filter((l) => l.message === 'Worker replaced');
      expect(replaced.map((l) => l.context.old_pid).sort()).toEqual(before);
      const after = workerPids(supervisor.pid);
      expect(after).toHaveLength(2);
      expect(after.filter((p) => before.includes(p))).toEqual([]);
    }, 90_000);

    it('refuses an application password on every worker as soon as it is revoked elsewhere', async () => {
      const ops = await administrator(t.ctx, 'ops-revoked');
      // Four requests on four connections: both workers answer twice, the second time from their cache.
      for (let i = 0; i < 4; i++) expect((await send(url, 'GET', `${NS}/jobs?per_page=1`, { authorization: ops.authorization })).status).toBe(200);
      const revoke = runner.start(['app-passwords', 'revoke', 'ops-revoked', ops.uuid]);
      expect((await revoke.finished()).code, revoke.stderr).toBe(0);
      for (let i = 0; i < 4; i++) expect((await send(url, 'GET', `${NS}/jobs?per_page=1`, { authorization: ops.authorization })).status).toBe(401);
    }, 60_000);

    it('stops every worker and exits 0 on SIGTERM', async () => {
      const pids = workerPids(supervisor.pid);
      supervisor.process.kill('SIGTERM');
      expect(await supervisor.finished(45_000)).toEqual({ code: 0, signal: null });
      for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
      expect(supervisorLog(supervisor).at(-1)?.message).toBe('Stopping');
    }, 60_000);
  });
}
