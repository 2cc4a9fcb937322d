// The security review's leak, replayed through the daemon: a custom network whose feed carries its
// secret setting in the URL path and in a query parameter with an innocent name (`?k=`), and in a
// header, against a feed server that fails in the ways feeds fail (5xx echoing the request, broken
// JSON, a dropped connection). Whatever the failure, the secret appears nowhere an administrator
// or an operator can read: GET /jobs, the network's last error and sync result, GET /logs, the
// daemon's stdout lines, and the CLI's output.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FixtureServer, json } from '../fixtures/networks/common.js';
import { describeDaemon, type Daemon, type Json } from '../helpers/daemon.js';
import { setUpNetwork } from '../helpers/e2e.js';
import { waitFor } from '../helpers/jobs.js';

// A slash, a space and a plus: the secret takes a different shape in a path, a query and a form.
const KEY = 'k3y/with space+plus-4f9e2d71c0';
const FORMS = [KEY, encodeURIComponent(KEY), new URLSearchParams({ k: KEY }).toString().slice(2), Buffer.from(KEY).toString('base64')];

class Lines extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}
const stdout = new Lines();

function definition(base: string): Json {
  return {
    name: 'Leaky Net',
    currency: 'EUR',
    settings: [{ name: 'api_key', secret: true, required: true }],
    statuses: { open: 'pending', ok: 'approved', no: 'declined' },
    postback: { params: { transaction_id: 'tid', commission: 'c', status: 's' } },
    feeds: {
      advertisers: {
        url: `${base}/feeds/{settings.api_key}/programs.json?k={settings.api_key}`,
        format: 'json',
        items: 'programs',
        fields: { id: 'id', name: 'name' },
      },
      transactions: {
        url: `${base}/tx?k={settings.api_key}&from={from}&to={to}`,
        format: 'json',
        headers: { 'X-Key': '{settings.api_key}' },
        fields: { transaction_id: 'id', commission: 'c' },
      },
    },
  };
}

/** Everything the secret must not be in, in each of its shapes. */
function expectClean(what: string, text: string): void {
  for (const form of FORMS) expect(text, `${what} holds the secret (${form})`).not.toContain(form);
}

describeDaemon(
  'a custom network whose feed URL carries its secret',
  (use) => {
    let server: FixtureServer;

    beforeAll(async () => {
      server = await FixtureServer.start((req) => (req.path === '/tx' ? json(200, []) : json(200, { programs: [{ id: 1, name: 'Shop' }] })));
      const created = await use().api('POST', '/networks/leaky', definition(server.url));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await setUpNetwork(use(), 'leaky', { stdin: { key: 'api_key', value: KEY } }, 'custom');
    });
    afterAll(() => server?.close());

    /** Starts a job over REST and waits until it is final; returns it. */
    async function run(d: Daemon, path: string): Promise<Json> {
      const started = await d.api('POST', path, { network: 'leaky' });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      return waitFor(
        async () => {
          const job = (await d.api('GET', `/jobs/${started.body.id}`)).body as Json;
          return ['done', 'failed', 'cancelled'].includes(job.status) ? job : null;
        },
        20_000,
        'the job to finish',
      );
    }

    /** Reads every surface and checks none holds the secret. */
    async function expectNowhere(d: Daemon): Promise<void> {
      await d.ctx.logger.flush();
      expectClean('GET /jobs', JSON.stringify((await d.api('GET', '/jobs?per_page=100')).body));
      expectClean('GET /networks/leaky', JSON.stringify((await d.api('GET', '/networks/leaky')).body));
      expectClean('GET /networks', JSON.stringify((await d.api('GET', '/networks')).body));
      expectClean('GET /logs', JSON.stringify((await d.api('GET', '/logs?per_page=100')).body));
      expectClean('stdout', stdout.text);
      for (const argv of [
        ['jobs', 'list', '--json'],
        ['networks', 'show', 'leaky'],
        ['logs', '--json', '--limit', '1000'],
        ['logs', '--limit', '1000'],
      ]) {
        const res = await d.cli(argv);
        expect(res.code, res.stderr).toBe(0);
        expectClean(`cashtrack ${argv.join(' ')}`, res.stdout + res.stderr);
      }
    }

    it.each([
      // Upstream error pages often echo the request.
      [
        'answers 500 with the request echoed',
        { kind: 'status', status: 500, body: `no programmes for /feeds/${encodeURIComponent(KEY)}/programs.json?k=${KEY}` },
        'svc_network_unavailable',
      ],
      ['answers broken JSON', { kind: 'truncated' }, 'svc_network_bad_response'],
      ['drops the connection', { kind: 'reset' }, 'svc_network_unavailable'],
    ] as const)('keeps the secret out of every message when the advertisers feed %s', async (_name, fault, code) => {
      const d = use();
      server.fault({ ...fault, times: Infinity, path: '/feeds/' });
      const job = await run(d, '/advertisers/sync');
      server.clearFaults();
      // The feed is named by its template: the secret placeholder stays unfilled.
      expect(job).toMatchObject({ status: 'failed', error: expect.stringContaining('/feeds/{settings.api_key}/programs.json') });
      // The request did carry the secret (so a leak was possible), in the path and in `k`.
      const request = server.requests.filter((r) => r.path.startsWith('/feeds/')).at(-1)!;
      expect(request.query.get('k')).toBe(KEY);
      expect(decodeURIComponent(request.path)).toContain(KEY);
      const network = (await d.api('GET', '/networks/leaky')).body as Json;
      expect(network.last_error).toEqual(expect.stringContaining('/feeds/'));
      expect(network.last_sync_result).toMatchObject({ advertisers: { error: expect.any(String) } });
      expect(job.error).not.toContain('svc_internal_error');
      expect(code).toMatch(/^svc_network_/);
      await expectNowhere(d);
    });

    it('keeps the secret out of the order poll and the CLI that runs it, the secret in a header too', async () => {
      const d = use();
      server.fault({ kind: 'status', status: 503, body: `overloaded; your key ${KEY} is fine`, times: Infinity, path: '/tx' });
      const job = await run(d, '/orders/poll');
      expect(job).toMatchObject({ status: 'failed' });
      expect(server.requests.filter((r) => r.path === '/tx').at(-1)!.headers['x-key']).toBe(KEY);
      const cli = await d.cli(['orders', 'poll', '--network', 'leaky']);
      expect(cli.code).toBe(1);
      expectClean('cashtrack orders poll', cli.stdout + cli.stderr);
      const sync = await d.cli(['advertisers', 'sync', '--network', 'leaky', '--json']);
      server.clearFaults();
      expectClean('cashtrack advertisers sync', sync.stdout + sync.stderr);
      await expectNowhere(d);
    });
  },
  {},
  { logStream: stdout },
);
