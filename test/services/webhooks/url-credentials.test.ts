// A webhook URL's user info and query are secret: a receiver's `https://user:pass@.../?token=...`
// is delivered to as given, but every answer, CLI line and log entry shows it redacted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shownUrl } from '../../../src/services/webhooks/shown-url.js';
import { runCli } from '../../helpers/cli.js';
import { describeEachDialect } from '../../helpers/context.js';
import { adminClient, NS } from '../../helpers/http.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const PASSWORD = 'pa55-hook-word';
const TOKEN = 'tok-9c1e77f0ab';

describe('shownUrl', () => {
  it('redacts user info, query and fragment, and keeps scheme, host, port and path', () => {
    expect(shownUrl(`https://crm:${PASSWORD}@hooks.example:8443/in/cashtrack?token=${TOKEN}&v=2#frag`)).toBe(
      'https://[redacted]@hooks.example:8443/in/cashtrack?[redacted]#[redacted]',
    );
    expect(shownUrl('https://hooks.example/in')).toBe('https://hooks.example/in');
    expect(shownUrl('not a url')).toBe('[redacted]');
  });
});

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describeEachDialect('a webhook URL with credentials', (use) => {
  const api = adminClient(use);
  const request = (method: string, url: string, payload?: unknown) =>
    api.server.inject({ method, url: `${NS}${url}`, payload: payload as object, headers: { authorization: api.admin.authorization } });

  it('is shown redacted in every answer and log line, and delivered to in full', async () => {
    const base = new URL(receiver.url);
    const url = `http://crm:${PASSWORD}@${base.host}${base.pathname}?token=${TOKEN}`;
    const created = await request('POST', '/webhooks', { url, events: ['*'] });
    expect(created.statusCode).toBe(201);
    const id = (created.result as { id: number }).id;
    const shown = `http://[redacted]@${base.host}${base.pathname}?[redacted]`;
    expect(created.result).toMatchObject({ url: shown });
    const answers = [
      created,
      await request('GET', '/webhooks'),
      await request('GET', `/webhooks/${id}`),
      await request('POST', `/webhooks/${id}`, { description: 'CRM' }),
      await request('POST', `/webhooks/${id}/test`),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.payload).toBeLessThan(300);
      expect(res.payload).not.toContain(PASSWORD);
      expect(res.payload).not.toContain(TOKEN);
    }
    // The ping reached the receiver with the URL's credentials.
    const ping = receiver.received.at(-1)!;
    expect(ping.path).toBe(`${base.pathname}?token=${TOKEN}`);
    expect(ping.headers.authorization).toBe(`Basic ${Buffer.from(`crm:${PASSWORD}`).toString('base64')}`);

    const removed = await request('DELETE', `/webhooks/${id}`);
    expect(removed.payload).not.toContain(TOKEN);
    const { ctx } = use();
    await ctx.logger.flush();
    const { items } = await ctx.logger.list({ source: 'webhooks', page: 1, per_page: 100 });
    expect(items.map((i) => i.message)).toEqual(expect.arrayContaining(['Webhook subscription created', 'Webhook subscription deleted']));
    expect(JSON.stringify(items)).toContain(shown);
    expect(JSON.stringify(items)).not.toContain(PASSWORD);
    expect(JSON.stringify(items)).not.toContain(TOKEN);
  });

  it('is shown redacted by the CLI', async () => {
    const { db } = use();
    const url = `https://crm:${PASSWORD}@hooks.example/in?token=${TOKEN}`;
    const added = await runCli(['webhooks', 'add', url, '--event', '*'], { db });
    expect(added.code, added.stderr).toBe(0);
    const id = /^id\s+(\d+)/m.exec(added.stdout)?.[1];
    const outputs = [
      added,
      await runCli(['webhooks', 'list'], { db }),
      await runCli(['webhooks', 'list', '--json'], { db }),
      await runCli(['webhooks', 'show', String(id)], { db }),
    ];
    for (const out of outputs) {
      expect(out.code).toBe(0);
      expect(out.stdout).toContain('https://[redacted]@hooks.example/in?[redacted]');
      expect(out.stdout).not.toContain(PASSWORD);
      expect(out.stdout).not.toContain(TOKEN);
    }
  });
});
