// The connect-time half of the guard on its own: the hop agents refuse a private address when the
// socket is made, whatever the lookup answers then, and admit exactly the addresses they are told.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressRefused, GuardHttpAgent, GuardHttpsAgent } from '../../src/outbound/agents.js';
import { fakeDns, serve, type Fixture } from './fixtures.js';

let site: Fixture;

beforeAll(async () => {
  site = await serve((_req, res) => res.writeHead(200).end('inside'));
});

afterAll(async () => {
  await site.close();
});

/** A GET through an agent: the body, or the error the request failed with. */
function get(agent: http.Agent, host: string, lookup?: LookupFunction): Promise<string | Error> {
  const client = agent instanceof https.Agent ? https : http;
  return new Promise((resolve) => {
    const req = client.get({ host, port: site.port, path: '/', agent, ...(lookup ? { lookup } : {}) }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', resolve);
  });
}

describe('the hop agents', () => {
  it('refuse a private address the lookup answers at connect time', async () => {
    const { lookup } = fakeDns({ 'fixture.test': ['127.0.0.1'] });
    const agent = new GuardHttpAgent({ admitted: [] });
    const before = site.connections;
    const result = await get(agent, 'fixture.test', lookup);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toMatch(/not allowed/);
    expect(site.connections).toBe(before);
    agent.destroy();
  });

  it('let through exactly the private addresses they admit', async () => {
    const { lookup } = fakeDns({ 'fixture.test': ['127.0.0.1'] });
    const agent = new GuardHttpAgent({ admitted: ['127.0.0.1'] });
    expect(await get(agent, 'fixture.test', lookup)).toBe('inside');
    agent.destroy();
  });

  it('refuse IPv4-compatible IPv6 answers and literals, which the library calls unicast', async () => {
    const { lookup } = fakeDns({ 'compat.test': ['::7f00:1'], 'public.test': ['::808:808'] });
    for (const Agent of [GuardHttpAgent, GuardHttpsAgent]) {
      const agent = new Agent({ admitted: [] });
      for (const [host, lk] of [
        ['compat.test', lookup],
        ['public.test', lookup],
        ['::7f00:1', lookup],
      ] as const) {
        const result = await get(agent as http.Agent, host, lk);
        expect(result).toBeInstanceOf(AddressRefused);
      }
      agent.destroy();
    }
  });

  it('refuse to dial without the lookup the guard pins', async () => {
    const agent = new GuardHttpAgent({ admitted: ['127.0.0.1'] });
    const before = site.connections;
    const result = await get(agent, 'localhost');
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toMatch(/resolved and checked itself/);
    expect(site.connections).toBe(before);
    agent.destroy();
  });
});
