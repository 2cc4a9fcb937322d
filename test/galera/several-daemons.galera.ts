// `npm run test:galera`: the several-daemons checks of test/e2e/several-daemons.test.ts on a
// three-node MariaDB Galera cluster (multi-primary, synchronous replication by certification),
// each daemon on its own node. On top of them: a migration started on two nodes at once applies
// once (the migration lock is a row; GET_LOCK would not be replicated); a load of ledger
// adjustments through all three daemons, whose certification conflicts are retried inside the
// services and never reach a client; and a node SIGKILLed in the middle of such a load: its
// daemon answers 503 at once, the other two go on, and no acknowledged adjustment is lost.
//
// Needs the cluster running (test/galera/cluster.ts checks it). The node-kill check also needs
// the nodes' files on this host (CASHTRACK_TEST_GALERA_BASE, default /tmp/galera, as
// galera-cluster.sh makes them): it SIGKILLs the third node's mariadbd by its pid file and starts
// it again with its option file, then waits until it is Synced.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, ensureSchema, type Context } from '../../src/context.js';
import { migrations } from '../../migrations/index.js';
import { BinaryRunner, requireCurrentBuild, type Child } from '../helpers/binary.js';
import { testConfig } from '../helpers/context.js';
import { startDaemonProcess } from '../helpers/daemon-processes.js';
import { NS } from '../helpers/http.js';
import {
  administrator,
  checkJobsRunOnce,
  checkKilledJob,
  checkKilledPostbacks,
  checkRevocation,
  checkScheduleFiresOnce,
  checkSessions,
  checkThrottle,
  DAEMON_ENV,
  eventually,
  type Cluster,
} from '../helpers/several-daemons.js';
import { connectNode, galeraNodes, wsrepStatus } from './cluster.js';
import { CLIENTS, load } from './load.js';

const NODES = galeraNodes();
const BASE = process.env.CASHTRACK_TEST_GALERA_BASE || '/tmp/galera';
const SECRET = 'galera-test-secret-0123456789abcdef0123456789abcdef';
const MEMBERS = 8;

/** Certification failures and brute-force aborts, summed over the nodes: the transactions the cluster aborted. */
async function aborts(nodes: URL[]): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const s = await wsrepStatus(node).catch(() => null);
    if (s) total += Number(s.wsrep_local_cert_failures) + Number(s.wsrep_local_bf_aborts);
  }
  return total;
}

/** Every node's balances equal the acknowledged effects, read on each node with causal reads. */
async function expectBalances(database: string, members: number[], expected: Map<number, number>): Promise<void> {
  for (const node of NODES) {
    const conn = await connectNode(node, database);
    try {
      await conn.query('SET SESSION wsrep_sync_wait = 1');
      const [rows] = await conn.query(
        `SELECT member_id, available FROM balances WHERE currency = 'USD' AND member_id IN (${members.join(', ')}) ORDER BY member_id`,
      );
      const seen = new Map((rows as { member_id: number; available: string }[]).map((r) => [Number(r.member_id), Number(r.available)]));
      expect(Object.fromEntries(members.map((m) => [m, seen.get(m) ?? 0])), `balances on ${node.host}`).toEqual(
        Object.fromEntries(members.map((m) => [m, expected.get(m)])),
      );
    } finally {
      await conn.end();
    }
  }
}

describe('three daemons on three Galera nodes', () => {
  const database = `ct_galera_${process.pid}_${randomBytes(3).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'cashtrack-galera-'));
  const urls = NODES.map((n) => new URL(`/${database}`, n).toString());
  let runner: BinaryRunner;
  let ctx: Context;
  let c: Cluster;
  let migrators: Child[] = [];
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    requireCurrentBuild();
    const admin = await connectNode(NODES[0]);
    await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    runner = new BinaryRunner({ url: urls[0], dataDir, drop: async () => {} }, SECRET);
    // Two processes migrate the empty database at the same moment, through two different nodes.
    migrators = [0, 1].map((i) => runner.start(['db', 'migrate', '--json'], { CASHTRACK_DATABASE_URL: urls[i] }));
    await Promise.all(migrators.map((m) => m.finished(240_000)));
    ctx = buildContext(testConfig({ url: urls[0], dataDir, drop: async () => {} }, { secret: SECRET }), { logStream: null });
    await ensureSchema(ctx, false);
    const envFor = (i: number) => ({ ...DAEMON_ENV, CASHTRACK_DATABASE_URL: urls[i % urls.length] });
    c = { ctx, runner, daemons: [], envFor };
    c.daemons = await Promise.all(NODES.map((_, i) => startDaemonProcess(runner, envFor(i))));
  }, 300_000);

  afterAll(async () => {
    await runner?.killAll();
    await ctx?.appPasswords.drain();
    await ctx?.close();
    const admin = await connectNode(NODES[0]);
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
    // The figures for docs/operations.md.
    console.log(`galera figures: ${JSON.stringify(figures)}`);
  });

  it('applies a migration started on two nodes at once exactly once', async () => {
    for (const m of migrators) expect(m.process.exitCode, m.stderr).toBe(0);
    const applied = migrators.map((m) => (JSON.parse(m.stdout) as { applied: string[] }).applied);
    const all = migrations.map((m) => m.name);
    expect(applied.sort((a, b) => b.length - a.length)).toEqual([all, []]);
    for (const node of NODES) {
      const conn = await connectNode(node, database);
      try {
        await conn.query('SET SESSION wsrep_sync_wait = 1');
        const [rows] = await conn.query('SELECT name, COUNT(*) AS n FROM migrations GROUP BY name');
        expect((rows as { n: number }[]).length, node.host).toBe(all.length);
        expect((rows as { n: number }[]).every((r) => Number(r.n) === 1)).toBe(true);
      } finally {
        await conn.end();
      }
    }
  });

  it("fires a schedule once per slot across the three nodes' daemons", () => checkScheduleFiresOnce(c), 300_000);
  it('runs each queued job once although row locks and SKIP LOCKED are local to each node', () => checkJobsRunOnce(c, 30), 300_000);
  it("refuses an application password revoked through another node on every daemon's next request", () => checkRevocation(c), 120_000);
  it("accepts a session made on one node's daemon on the others", () => checkSessions(c), 120_000);
  it('counts authentication failures across the nodes: exactly the configured number of checks', () => checkThrottle(c), 120_000);
  it('takes over the job of a SIGKILLed daemon on another node', () => checkKilledJob(c), 300_000);
  it('keeps every postback a SIGKILLed daemon acknowledged', () => checkKilledPostbacks(c), 300_000);

  it("retries the cluster's certification conflicts inside the services: a load through three nodes shows none to a client and loses nothing", async () => {
    const admin = await administrator(ctx, 'galera-load');
    const members: number[] = [];
    for (let i = 0; i < MEMBERS; i++) members.push((await ctx.users.create({ login: `galera-member-${i}`, email: `galera-member-${i}@example.com` })).id);
    const before = await aborts(NODES);
    const run = await load(() => c.daemons, admin.authorization, members, 20_000);
    const aborted = (await aborts(NODES)) - before;
    figures.load = {
      clients: CLIENTS,
      members: MEMBERS,
      seconds: run.seconds,
      acknowledged: run.acknowledged,
      per_second: Math.round(run.acknowledged / run.seconds),
      cluster_aborts: aborted,
      answers: Object.fromEntries(run.answers),
    };
    // Not one conflict reached a client: every request was answered 201 the first time.
    expect(Object.fromEntries(run.answers)).toEqual({});
    expect(run.acknowledged).toBeGreaterThan(0);
    await expectBalances(database, members, run.effects);
    expect(await ctx.ledger.verify()).toEqual([]);
    (globalThis as { galeraLoad?: unknown }).galeraLoad = { members, effects: run.effects, authorization: admin.authorization };
  }, 300_000);

  it("goes on through the other nodes when one node's server is SIGKILLed mid-run: its daemon answers 503 at once, nothing is lost", async () => {
    const state = (globalThis as { galeraLoad?: { members: number[]; effects: Map<number, number>; authorization: string } }).galeraLoad!;
    const victim = NODES.length - 1;
    const pidFile = join(BASE, `n${victim + 1}.pid`);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    let unavailable: { status: number; code: string } | null = null;
    let afterKill = 0;
    const run = await load(
      () => c.daemons,
      state.authorization,
      state.members,
      20_000,
      async () => {
        await new Promise((r) => setTimeout(r, 5_000));
        process.kill(pid, 'SIGKILL');
        const killedAt = Date.now();
        // The node's daemon says so at once, with the code a balancer or client retries on.
        const res = await c.daemons[victim].request('GET', `${NS}/jobs?per_page=1`, { headers: { authorization: state.authorization } });
        unavailable = { status: res.status, code: res.body.code };
        afterKill = Date.now() - killedAt;
      },
    );
    expect(unavailable).toEqual({ status: 503, code: 'svc_database_unavailable' });
    // Only unavailability was seen (clients sent those adjustments again to another daemon), never a conflict.
    for (const key of run.answers.keys()) expect(key).toMatch(/^(503 svc_database_unavailable|0 \w+)$/);
    figures.node_killed = {
      seconds: run.seconds,
      acknowledged: run.acknowledged,
      per_second: Math.round(run.acknowledged / run.seconds),
      answers: Object.fromEntries(run.answers),
      first_503_after_ms: afterKill,
    };
    const expected = new Map(state.members.map((m) => [m, state.effects.get(m)! + run.effects.get(m)!]));

    // The node comes back (state transfer from the others) and has every acknowledged effect too.
    const node = spawn('mariadbd', [`--defaults-file=${join(BASE, `n${victim + 1}.cnf`)}`], { detached: true, stdio: 'ignore' });
    node.unref();
    await eventually(async () => (await wsrepStatus(NODES[victim]).catch(() => null))?.wsrep_local_state_comment === 'Synced', 'the node to rejoin', 240_000);
    await eventually(
      async () => (await c.daemons[victim].request('GET', `${NS}/jobs?per_page=1`, { headers: { authorization: state.authorization } })).status === 200,
      'its daemon to answer again',
      60_000,
    );
    await expectBalances(database, state.members, expected);
    expect(await ctx.ledger.verify()).toEqual([]);
  }, 600_000);
});
