// Steps the end-to-end tests (test/e2e/) share: an administrator setting a network up with the
// CLI, starting jobs over REST and waiting for the daemon's runner, and reading balances, entries,
// orders and postback records the way an administrator sees them.
import { expect } from 'vitest';
import type { Daemon, Json } from './daemon.js';
import { count } from './daemon.js';

export interface SetUp {
  /** Plain settings, `--set key=value`. */
  set?: Record<string, string>;
  /** One secret setting read from standard input. */
  stdin?: { key: string; value: string };
  /** Secret settings read from environment variables (`--secret-env key=VAR`). */
  env?: Record<string, string>;
}

/**
 * Configures and enables a network with the CLI, generates its postback secret and switches its
 * postbacks on; checks on the way that the endpoint refuses postbacks (403, nothing stored) until
 * the network's switch is on, and that no secret is ever printed. Returns the postback secret
 * (shown once, by `postback-secret --rotate`).
 */
export async function setUpNetwork(d: Daemon, id: string, s: SetUp, kind: 'builtin' | 'custom' = 'builtin'): Promise<string> {
  const argv = ['networks', 'configure', id, ...Object.entries(s.set ?? {}).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(s.env ?? {})) {
    const name = `E2E_${id.toUpperCase()}_${key.toUpperCase()}`;
    env[name] = value;
    argv.push('--secret-env', `${key}=${name}`);
  }
  if (s.stdin) argv.push('--secret-stdin', s.stdin.key);
  const secrets = [...Object.values(s.env ?? {}), ...(s.stdin ? [s.stdin.value] : [])];
  const printed: string[] = [];
  const run = async (args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) => {
    const res = await d.cli(args, options);
    expect(res.code, `cashtrack ${args.join(' ')}: ${res.stderr}`).toBe(0);
    printed.push(res.stdout, res.stderr);
    return res;
  };

  expect((await run(argv, { env, stdin: s.stdin ? `${s.stdin.value}\n` : undefined })).stdout).toMatch(/; ready\n$/);
  await run(['networks', 'enable', id]);
  const shown = (await run(['networks', 'show', id, '--json'])).json<Json>();
  expect(shown).toMatchObject({ id, kind, enabled: true, configured: true, postbacks: { enabled: false, secret_set: false } });

  const secret = (await run(['networks', 'postback-secret', id, '--rotate', '--json'])).json<{ secret: string }>().secret;
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // The secret exists, the global switch is on, the network's is still off: refused, nothing stored.
  const before = await count(d, 'postbacks');
  const off = await d.postback(id, { query: `token=${secret}` });
  expect(off).toMatchObject({ status: 403, body: { code: 'svc_postbacks_disabled' } });
  expect(await count(d, 'postbacks')).toBe(before);

  await run(['networks', 'postbacks', id, 'on']);
  for (const text of printed) for (const value of secrets) expect(text).not.toContain(value);

  const network = await d.api('GET', `/networks/${id}`);
  expect(network.body).toMatchObject({
    enabled: true,
    configured: true,
    postbacks: { enabled: true, mode: 'token', secret_set: true, url: `${d.url}/postback/${id}` },
  });
  for (const value of [...secrets, secret]) expect(JSON.stringify(network.body)).not.toContain(value);
  return secret;
}

/** POST /advertisers/sync {network} (202), then waits for the daemon's runner to finish the job. */
export async function syncAdvertisers(d: Daemon, network: string): Promise<Json> {
  const started = await d.api('POST', '/advertisers/sync', { network });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body).toMatchObject({ type: 'advertisers.sync', params: { network } });
  const job = await d.finished(started.body);
  return (job.result as { networks: Record<string, Json> }).networks[network];
}

/** POST /orders/poll {network} (202), then waits for the daemon's runner to finish the job. */
export async function pollOrders(d: Daemon, network: string): Promise<Json> {
  const started = await d.api('POST', '/orders/poll', { network });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body).toMatchObject({ type: 'orders.poll', params: { network } });
  const job = await d.finished(started.body);
  return (job.result as { networks: Record<string, Json> }).networks[network];
}

/**
 * GET /advertisers/{network}/{advertiser}/link for a member (and a target URL): the answer, with
 * the link parsed. The sub id is the member's id, the value the network echoes back.
 */
export async function trackingLink(d: Daemon, network: string, advertiser: string, memberId: number, url?: string): Promise<Json & { parsed: URL }> {
  const query = new URLSearchParams({ member: String(memberId), ...(url ? { url } : {}) });
  const res = await d.api('GET', `/advertisers/${network}/${advertiser}/link?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ module: network, advertiser, member: { id: memberId }, sub_id: String(memberId), deeplink: url !== undefined });
  return { ...(res.body as Json), parsed: new URL(res.body.url) };
}

/** Every advertiser of a network, by name, as GET /advertisers lists them. */
export async function advertisersOf(d: Daemon, network: string): Promise<Json[]> {
  const res = await d.api('GET', `/advertisers?network=${network}&per_page=100`);
  expect(res.status).toBe(200);
  return res.body as Json[];
}

/** A member's balance in one currency, as GET /ledger/members shows it (zeros when none). */
export async function balanceOf(d: Daemon, memberId: number, currency: string): Promise<{ available: string; pending: string }> {
  const res = await d.api('GET', `/ledger/members?currency=${currency}&per_page=100`);
  expect(res.status).toBe(200);
  const row = (res.body as Json[]).find((b) => b.member_id === memberId);
  return row ? { available: row.available, pending: row.pending } : { available: '0.00', pending: '0.00' };
}

/** A member's ledger entries, newest first, as GET /ledger/entries lists them. */
export async function entriesOf(d: Daemon, memberId: number): Promise<Json[]> {
  const res = await d.api('GET', `/ledger/entries?member_id=${memberId}&per_page=100`);
  expect(res.status).toBe(200);
  return res.body as Json[];
}

/** One order by id (GET /orders/{id}). */
export async function orderById(d: Daemon, id: number): Promise<Json> {
  const res = await d.api('GET', `/orders/${id}`);
  expect(res.status).toBe(200);
  return res.body as Json;
}

/** The one order of a network transaction (GET /orders?network=&search=). */
export async function orderOf(d: Daemon, network: string, transactionId: string): Promise<Json> {
  const res = await d.api('GET', `/orders?network=${network}&search=${encodeURIComponent(transactionId)}&per_page=100`);
  const found = (res.body as Json[]).filter((o) => o.transaction_id === transactionId);
  expect(found, `orders of ${network}:${transactionId}`).toHaveLength(1);
  return orderById(d, found[0].id);
}

/** The postback records of a network, newest first (GET /networks/{id}/postbacks). */
export async function postbacksOf(d: Daemon, network: string, query = ''): Promise<Json[]> {
  const res = await d.api('GET', `/networks/${network}/postbacks?per_page=100${query ? `&${query}` : ''}`);
  expect(res.status).toBe(200);
  return res.body as Json[];
}

/** `cashtrack ledger verify --json` and the service's own check both find nothing. */
export async function expectLedgerClean(d: Daemon): Promise<void> {
  const res = await d.cli(['ledger', 'verify', '--json']);
  expect(res.code, res.stdout + res.stderr).toBe(0);
  expect(res.json()).toEqual({ ok: true, discrepancies: [] });
  expect(await d.ctx.ledger.verify()).toEqual([]);
}

/**
 * POST /networks/{id}/postback/test: the daemon sends itself a postback in the network's format
 * over HTTP; it is stored as a test and records no order and no entry.
 */
export async function expectTestPostback(d: Daemon, id: string, input: Json = {}): Promise<Json> {
  const before = { orders: await count(d, 'orders'), entries: await count(d, 'ledger_entries') };
  const res = await d.api('POST', `/networks/${id}/postback/test`, input);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({
    request: { method: 'GET', url: expect.stringMatching(new RegExp(`^${d.url}/postback/${id}\\?`)) },
    response: { status: 200, body: { ok: true, test: true, order_id: null } },
    record: { network: id, outcome: 'accepted', code: 'svc_postback_test', test: true, order_id: null },
  });
  expect({ orders: await count(d, 'orders'), entries: await count(d, 'ledger_entries') }).toEqual(before);
  return res.body as Json;
}
