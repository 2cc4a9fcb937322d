import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack jobs [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    /** Changes a row behind the service's back (to make a job fail when it starts). */
    const sql = async (statement: string, params: unknown[]) => {
      if (dialect === 'mysql') {
        const conn = await mysql.createConnection(db.url);
        await conn.query(statement, params);
        await conn.end();
      } else {
        const { default: sqlite3 } = await import('sqlite3');
        const file = db.url.slice('sqlite:'.length);
        await new Promise<void>((resolve, reject) => {
          const conn = new sqlite3.Database(file, (err) => {
            if (err) return reject(err);
            conn.run(statement, params, (e) => conn.close(() => (e ? reject(e) : resolve())));
          });
        });
      }
    };

    // Every test starts from an empty job table: what one queues is not another's to run or count.
    beforeEach(() => sql('DELETE FROM jobs', []));

    it('enqueues, lists, shows and cancels jobs', async () => {
      const queued = await runCli(['jobs', 'enqueue', 'maintenance.prune', '--params', '{"log_retention_days": 7}', '--json'], { db });
      expect(queued.code).toBe(0);
      const job = queued.json<Json>();
      expect(job).toMatchObject({ type: 'maintenance.prune', params: { log_retention_days: 7 }, status: 'queued', actor: 'cli' });
      const text = await runCli(['jobs', 'enqueue', 'maintenance.prune'], { db });
      expect(text.stdout).toMatch(/^job \d+ queued: maintenance\.prune \{\} \(a daemon runs it, or: cashtrack jobs run-pending\)\n$/);
      const list = await runCli(['jobs', 'list', '--json'], { db });
      expect(list.json<Json[]>().map((j) => j.status)).toEqual(['queued', 'queued']);
      const table = await runCli(['jobs', 'list', '--type', 'maintenance.prune'], { db });
      expect(table.stdout).toMatch(/ID\s+TYPE\s+STATUS\s+PROGRESS/);
      expect(table.stdout).toContain('2 job(s)');
      const show = await runCli(['jobs', 'show', String(job.id)], { db });
      expect(show.stdout).toMatch(/type\s+maintenance\.prune/);
      expect(show.stdout).toMatch(/params\s+\{"log_retention_days":7\}/);
      expect(show.stdout).toMatch(/progress\s+0 done/);
      const cancelled = await runCli(['jobs', 'cancel', String(job.id)], { db });
      expect(cancelled.stdout).toBe(`job ${job.id} cancelled\n`);
      const again = await runCli(['jobs', 'cancel', String(job.id)], { db });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^svc_job_finished: /);
      expect((await runCli(['jobs', 'list', '--status', 'cancelled', '--json'], { db })).json<Json[]>().map((j) => j.id)).toEqual([job.id]);
    });

    it('runs pending jobs in-process until none is left', async () => {
      expect((await runCli(['jobs', 'enqueue', 'maintenance.prune'], { db })).code).toBe(0);
      const run = await runCli(['jobs', 'run-pending'], { db });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^job \d+ maintenance\.prune: done\n1 job\(s\) run\n$/);
      const none = await runCli(['jobs', 'run-pending', '--json'], { db });
      expect(none.code).toBe(0);
      expect(none.json()).toEqual([]);
      expect((await runCli(['jobs', 'run-pending'], { db })).stdout).toBe('no jobs to run\n');
    });

    it('exits 1 from run-pending when a job failed, with the job and its error', async () => {
      const job = (await runCli(['jobs', 'enqueue', 'maintenance.prune', '--json'], { db })).json<Json>();
      // Params this version no longer accepts: the job fails when it starts.
      await sql('UPDATE jobs SET params = ? WHERE id = ?', ['{"log_retention_days": "forever"}', job.id]);
      const run = await runCli(['jobs', 'run-pending', '--json'], { db });
      expect(run.code).toBe(1);
      expect(run.json<Json[]>()).toMatchObject([
        { id: job.id, status: 'failed', error: expect.stringMatching(/^Invalid parameters for maintenance\.prune: log_retention_days must be a number/) },
      ]);
      const text = await runCli(['jobs', 'show', String(job.id)], { db });
      expect(text.stdout).toMatch(/error\s+Invalid parameters/);
    });

    it('names svc_job_failed on stderr when run-pending ran a failing job without --json', async () => {
      const job = (await runCli(['jobs', 'enqueue', 'maintenance.prune', '--json'], { db })).json<Json>();
      await sql('UPDATE jobs SET params = ? WHERE id = ?', ['{"log_retention_days": "forever"}', job.id]);
      const run = await runCli(['jobs', 'run-pending'], { db });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`job ${job.id} maintenance.prune: failed (Invalid parameters`);
      expect(run.stderr).toBe('svc_job_failed: 1 job(s) failed\n');
    });

    it('refuses an unknown type, bad params, bad JSON and a second unique job', async () => {
      const unknown = await runCli(['jobs', 'enqueue', 'nope.nothing'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc_unknown_job_type: There is no job type "nope\.nothing"/);
      const bad = await runCli(['jobs', 'enqueue', 'maintenance.prune', '--params', '{"log_retention_days": 0}'], { db });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^svc_invalid_job_params: .*log_retention_days must be greater than or equal to 1/);
      const json = await runCli(['jobs', 'enqueue', 'maintenance.prune', '--params', '{oops'], { db });
      expect(json.code).toBe(2);
      expect(json.stderr).toMatch(/^svc_usage: --params must be a JSON object/);
      expect((await runCli(['jobs', 'enqueue', 'maintenance.prune', '--params', '[1]'], { db })).code).toBe(2);
      expect((await runCli(['jobs', 'enqueue', 'maintenance.prune', '--unique', '--params', '{"log_retention_days": 9}'], { db })).code).toBe(0);
      const twice = await runCli(['jobs', 'enqueue', 'maintenance.prune', '--unique', '--params', '{"log_retention_days": 9}'], { db });
      expect(twice.code).toBe(1);
      expect(twice.stderr).toMatch(/^svc_job_already_running: A maintenance\.prune job with these parameters is already queued \(job \d+\)\./);
      expect((await runCli(['jobs', 'show', '999999'], { db })).stderr).toMatch(/^svc_job_not_found: /);
      expect((await runCli(['jobs', 'show', 'x'], { db })).code).toBe(1);
    });

    it('lists the job types with their parameters', async () => {
      const types = await runCli(['jobs', 'types', '--json'], { db });
      expect(types.json<Json[]>()).toContainEqual({ type: 'maintenance.prune', description: expect.any(String), params: ['log_retention_days'] });
    });
  });
}
