// Servers on 127.0.0.1 (or another loopback address) for the outbound guard's tests, counting the
// connections they accept so a test can assert that a refused request never reached them; and the
// assertion that a fetch was refused.
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { expect } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import type { FetchBlockedReason, OutboundGuard, OutboundRequest } from '../../src/outbound/index.js';

export interface Fixture {
  server: http.Server;
  port: number;
  /** http://HOST:PORT */
  base: string;
  /** Connections accepted so far. */
  connections: number;
  /** Requests received so far (path and headers). */
  requests: { url: string; method: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

export async function serve(handler: http.RequestListener, host = '127.0.0.1', port = 0): Promise<Fixture> {
  const fixture: Fixture = {
    server: null as unknown as http.Server,
    port: 0,
    base: '',
    connections: 0,
    requests: [],
    async close() {
      fixture.server.closeAllConnections();
      await new Promise<void>((resolve) => fixture.server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      fixture.requests.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      handler(req, res);
    });
  });
  server.on('connection', () => fixture.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  fixture.server = server;
  fixture.port = (server.address() as AddressInfo).port;
  fixture.base = `http://${host.includes(':') ? `[${host}]` : host}:${fixture.port}`;
  return fixture;
}

/**
 * A DNS double: each name maps to the answers of its successive lookups (the last one repeats),
 * so `['127.0.0.1', '127.0.0.2']` answers the first lookup with one address and every later
 * lookup with the other (DNS rebinding). Unknown names fail as ENOTFOUND. `calls` counts lookups.
 */
export function fakeDns(names: Record<string, (string | string[])[]>): { lookup: LookupFunction; calls: Record<string, number> } {
  const calls: Record<string, number> = Object.create(null);
  const lookup = ((
    hostname: string,
    options: { all?: boolean },
    callback: (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void,
  ) => {
    const answers = Object.hasOwn(names, hostname) ? names[hostname] : null;
    if (!answers) return process.nextTick(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })));
    const n = (calls[hostname] = (calls[hostname] ?? 0) + 1);
    const answer = ([] as string[]).concat(answers[Math.min(n, answers.length) - 1]);
    const list = answer.map((address) => ({ address, family: isIP(address) }));
    process.nextTick(() => (options?.all ? callback(null, list) : callback(null, list[0].address, list[0].family)));
  }) as unknown as LookupFunction;
  return { lookup, calls };
}

/** The refusal of a fetch (fails the test when the fetch succeeds or fails otherwise). */
export async function refusal(guard: OutboundGuard, url: string, request: OutboundRequest = {}): Promise<ServiceError> {
  let result: unknown;
  try {
    result = await guard.fetch(url, request);
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    const e = err as ServiceError;
    expect(e).toMatchObject({ code: 'svc_fetch_blocked', status: 422 });
    return e;
  }
  throw new Error(`${url} got through: ${JSON.stringify({ status: (result as { status: number }).status })}`);
}

/** The refusal of a fetch, for `reason`. */
export async function refused(guard: OutboundGuard, url: string, reason: FetchBlockedReason, request: OutboundRequest = {}): Promise<ServiceError> {
  const err = await refusal(guard, url, request);
  expect(err.data.reason, `${url}: ${err.message}`).toBe(reason);
  return err;
}
