// Several daemons on one database, proven with real processes: three `cashtrack serve` of the
// built binary, each on its own port, share one database (and secret), as behind a load balancer.
// A schedule fires once per slot; a queued job runs once; an application password revoked by another process is refused by every
// daemon on its next request, however warm its credential cache; a session made on one daemon
// works on all; the authentication throttle counts failures across daemons; a daemon killed with
// SIGKILL loses no job (taken over after its lease) and no acknowledged postback.
//
// The point is several processes on one MariaDB server. It runs on SQLite too: the daemons then
// share one file on one host, which docs/operations.md supports (writes are serialised), and every
// check holds the same way. test/galera/ runs the same checks with each daemon on its own Galera node.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { BinaryRunner, requireCurrentBuild } from '../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { startDaemonProcess } from '../helpers/daemon-processes.js';
import {
  checkJobsRunOnce,
  checkKilledJob,
  checkKilledPostbacks,
  checkRevocation,
  checkScheduleFiresOnce,
  checkSessions,
  checkThrottle,
  DAEMON_ENV,
  type Cluster,
} from '../helpers/several-daemons.js';

for (const dialect of dialects) {
  describe(`three daemons on one database [${dialect}]`, () => {
    let t: TestContext;
    let c: Cluster;
    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      const runner = new BinaryRunner(t.db, t.config.secret);
      const envFor = (_i: number) => DAEMON_ENV;
      c = { ctx: t.ctx, runner, daemons: [], envFor };
      c.daemons = await Promise.all([0, 1, 2].map((i) => startDaemonProcess(runner, envFor(i))));
    }, 120_000);
    afterAll(async () => {
      await c?.runner.killAll();
      await destroyTestContext(t);
    });

    it('fires a schedule once per slot across the three daemons, whichever wins it', () => checkScheduleFiresOnce(c), 180_000);
    it('runs each queued job once, in one of the daemons', () => checkJobsRunOnce(c), 120_000);
    it("refuses an application password revoked by another process on every daemon's next request, cache or not", () => checkRevocation(c), 60_000);
    it('accepts a session made on one daemon on all of them, and ends it everywhere on logout', () => checkSessions(c), 60_000);
    it('counts authentication failures across daemons: exactly the configured number of checks, then 429 on all', () => checkThrottle(c), 60_000);
    it('takes over the job of a daemon killed with SIGKILL once its lease expires, and finishes it once', () => checkKilledJob(c), 180_000);
    it(
      'keeps every postback a SIGKILLed daemon acknowledged, and records the unanswered ones once when resent to another',
      () => checkKilledPostbacks(c),
      180_000,
    );
  });
}
