// A large JSON feed of a custom network, synced by a real daemon (`cashtrack serve`, a process of
// the built binary) from a feed server on 127.0.0.1 that generates it as it is read: the daemon
// keeps answering /healthz throughout (never stalled for a second; the 200 ms target is
// bench:feed's, measured on a quiet machine), its memory stays far below the feed's size,
// and SIGTERM in the middle of the sync stops it within the documented 10 s, the job given back
// to the queue. A feed read whole and parsed at once (JSON.parse) blocked the event loop for
// seconds and took the daemon to several times the feed's size.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/services/jobs/rows.js';
import { BinaryRunner, requireCurrentBuild } from '../helpers/binary.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { startDaemonProcess } from '../helpers/daemon-processes.js';
import { waitFor } from '../helpers/jobs.js';

/** Records of about 1.4 KB: a 45,000-record feed is about 60 MB. */
const RECORDS = 45_000;
const ABOUT = 'Tea, coffee and everything around them. '.repeat(30);

function record(i: number): string {
  return JSON.stringify({
    id: `P${i}`,
    name: `Shop ${i}`,
    url: `https://shop${i}.example.test/`,
    state: 'joined',
    pay: { min: '4', max: '6' },
    cats: ['Food & Drink', 'Home'],
    about: ABOUT,
  });
}

const HEAD = '{"meta":{"generated":"now","note":"records below"},"data":{"programs":[';
const TAIL = ']}}';
/** The whole document's size in bytes. */
const FEED_BYTES =
  Buffer.byteLength(HEAD) +
  Buffer.byteLength(TAIL) +
  (RECORDS - 1) +
  Array.from({ length: RECORDS }, (_, i) => Buffer.byteLength(record(i))).reduce((a, b) => a + b, 0);

/** A feed server writing the document as the reader takes it (never more than the socket accepts). */
interface Feed {
  url: string;
  /** Bytes written so far to the current request. */
  sent(): number;
  requests(): number;
  close(): Promise<void>;
}

async function startFeed(records: number): Promise<Feed> {
  let sent = 0;
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    sent = 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    let i = 0;
    const write = (text: string) => {
      sent += Buffer.byteLength(text);
      return res.write(text);
    };
    const pump = () => {
      if (i === 0) write(HEAD);
      while (i < records) {
        const batch: string[] = [];
        for (const end = Math.min(records, i + 40); i < end; i++) batch.push(record(i));
        if (!write((i > 40 ? ',' : '') + batch.join(','))) return void res.once('drain', pump);
      }
      write(TAIL);
      res.end();
    };
    res.on('error', () => {});
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The process's peak resident memory in MB (Linux), or null where /proc does not tell it. */
function peakRssMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

const DAEMON_ENV = { CASHTRACK_JOBS_POLL_INTERVAL_MS: '50' };

for (const dialect of dialects) {
  describe(`a large JSON feed synced by a real daemon [${dialect}]`, () => {
    let t: TestContext;
    let runner: BinaryRunner;
    let feed: Feed;

    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      runner = new BinaryRunner(t.db, t.config.secret);
      feed = await startFeed(RECORDS);
      await t.ctx.networks.saveCustom(
        'bignet',
        {
          name: 'Big Net',
          currency: 'EUR',
          statuses: { ok: 'approved' },
          feeds: {
            advertisers: {
              url: `${feed.url}/programs.json`,
              format: 'json',
              items: 'data.programs',
              fields: { id: 'id', name: 'name', site_url: 'url', status: 'state', commission_min: 'pay.min', commission_max: 'pay.max', categories: 'cats' },
              active_values: ['joined'],
            },
          },
        },
        'test',
      );
      await t.ctx.networks.enable('bignet', 'test');
    }, 60_000);
    afterAll(async () => {
      await runner?.killAll();
      await feed?.close();
      await destroyTestContext(t);
    });

    const job = (id: number) => t.ctx.jobs.get(id);

    it('answers /healthz throughout the sync with no stall of a second, and stays far below the feed in memory', async () => {
      const d = await startDaemonProcess(runner, DAEMON_ENV);
      try {
        const latencies: number[] = [];
        let probing = true;
        // Probes over a real socket, one after another, from before the job is queued until it ends.
        const probe = (async () => {
          while (probing) {
            const started = performance.now();
            const res = await fetch(`${d.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
            await res.text();
            expect(res.status).toBe(200);
            latencies.push(performance.now() - started);
            await new Promise((r) => setTimeout(r, 20));
          }
        })();
        let final: Job;
        try {
          const queued = await t.ctx.jobs.enqueue('advertisers.sync', { network: 'bignet' }, 'test');
          final = await waitFor(
            async () => {
              const j = await job(queued.id);
              return ['done', 'failed', 'cancelled'].includes(j.status) ? j : null;
            },
            120_000,
            'the sync to finish',
          );
        } finally {
          probing = false;
          await probe;
        }
        expect(final, JSON.stringify(final)).toMatchObject({ status: 'done', error: null, progress: { total: RECORDS, done: RECORDS, failed: 0 } });
        expect((final.result as { networks: Record<string, unknown> }).networks.bignet).toMatchObject({ created: RECORDS, failed: 0 });
        expect(feed.sent()).toBe(FEED_BYTES);
        expect(latencies.length).toBeGreaterThan(10);
        const slowest = [...latencies].sort((a, b) => b - a).slice(0, 5);
        // A feed parsed whole stalled the loop for seconds; 200 ms is a speed target, kept by bench:feed
        // (a timed test on a shared machine would fail on a scheduler's hiccup: 237 ms was seen once).
        expect(slowest[0], `slowest /healthz answers (ms): ${slowest.map(Math.round).join(', ')}`).toBeLessThan(1_000);
        // The daemon's own baseline is well under 200 MB; a feed read whole adds several times its size.
        const peak = peakRssMb(d.pid);
        if (peak !== null) expect(peak).toBeLessThan(300);
        d.child.process.kill('SIGTERM');
        expect(await d.child.finished(15_000)).toEqual({ code: 0, signal: null });
      } finally {
        // Whatever failed, this daemon takes no job of the next test.
        if (d.alive()) d.child.process.kill('SIGKILL');
      }
    }, 180_000);

    it('stops within the documented 10 s on SIGTERM in the middle of the sync, giving the job back to the queue', async () => {
      const d = await startDaemonProcess(runner, DAEMON_ENV);
      const before = feed.requests();
      const queued = await t.ctx.jobs.enqueue('advertisers.sync', { network: 'bignet' }, 'test');
      // Part-way through: the feed is being read and pages are being stored.
      await waitFor(
        async () => feed.requests() > before && feed.sent() > 8 * 1024 * 1024 && (await job(queued.id)).status === 'running',
        60_000,
        'the sync to be under way',
      );
      const started = performance.now();
      d.child.process.kill('SIGTERM');
      const exit = await d.child.finished(30_000);
      const seconds = (performance.now() - started) / 1000;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(seconds).toBeLessThan(10);
      // Stopped in time: queued again without a lease, for the next runner to resume at once.
      const after = await job(queued.id);
      expect(after.status, JSON.stringify(after)).toBe('queued');
      // The read stopped with the sync: most of the feed was never sent.
      expect(feed.sent()).toBeLessThan(FEED_BYTES / 2);
    }, 120_000);
  });
}
