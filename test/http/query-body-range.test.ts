// Two host conventions taken from WordPress: a route's body parameters may come from the query
// string too (the body winning), and a JSON answer is always sent whole, whatever `Range` asks.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';
import { image } from '../helpers/images.js';
import { addAdvertiser, site, type Site } from '../helpers/web.js';

type Json = Record<string, any>;

describeEachDialect('REST host: parameters from the query or the body, Range ignored on JSON', (use) => {
  const api = adminClient(use);
  let web: Site;
  beforeAll(async () => {
    web = await site({ '/logo.png': { body: await image('png', 64, 64), type: 'image/png' } });
  });
  afterAll(async () => {
    await web.close();
  });
  let n = 0;
  const member = async () => (await use().ctx.users.create({ login: `qb${++n}`, email: `qb${n}@example.com`, role: 'member' })).id;
  const send = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.server.inject({ method, url: `${NS}${url}`, payload: payload as object, headers: { authorization: api.admin.authorization, ...headers } });

  it('takes a declared body parameter from the query string of a POST: POST /ai/shop/1?dry_run=true is not refused for dry_run', async () => {
    const res = await send('POST', '/ai/shop/1?dry_run=true', {});
    // No AI provider is set up here: the route runs and answers that, rather than refusing the parameter.
    expect(res.result).not.toMatchObject({ code: 'rest_invalid_param' });
    expect((res.result as Json).code).toMatch(/^svc_/);
  });

  it('reads every body parameter from the query string alone, with no body at all', async () => {
    const id = await member();
    const res = await send('POST', `/ledger/adjustments?member_id=${id}&type=credit&amount=4.50&note=from%20the%20query`);
    expect(res.statusCode, res.payload).toBe(201);
    expect((res.result as Json).entry).toMatchObject({ member_id: id, amount: '4.50', note: 'from the query' });
  });

  it('mixes the two: some parameters in the body, the others in the query', async () => {
    const id = await member();
    const res = await send('POST', '/ledger/adjustments?note=query%20note&amount=2.00', { member_id: id, type: 'credit' });
    expect(res.statusCode, res.payload).toBe(201);
    expect((res.result as Json).entry).toMatchObject({ member_id: id, amount: '2.00', note: 'query note' });
  });

  it('lets the body win when both carry a parameter, as WordPress does', async () => {
    const id = await member();
    const res = await send('POST', '/ledger/adjustments?note=query%20note&amount=9.00', { member_id: id, type: 'credit', amount: '1.00', note: 'body note' });
    expect(res.statusCode, res.payload).toBe(201);
    expect((res.result as Json).entry).toMatchObject({ amount: '1.00', note: 'body note' });
  });

  it('validates a parameter from the query like one from the body, and still refuses an undeclared one', async () => {
    const id = await member();
    const bad = await send('POST', `/ledger/adjustments?type=gift`, { member_id: id, amount: '1.00', note: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { type: expect.any(String) } } });
    const unknown = await send('POST', '/ledger/adjustments?colour=red', { member_id: id, type: 'credit', amount: '1.00', note: 'x' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { colour: expect.any(String) } } });
  });

  it('counts a parameter from the query in the Idempotency-Key request: the same request either way is a replay', async () => {
    const id = await member();
    const key = { 'idempotency-key': `qb-${id}` };
    const first = await send('POST', `/ledger/adjustments?note=same`, { member_id: id, type: 'credit', amount: '1.00' }, key);
    const again = await send('POST', '/ledger/adjustments', { member_id: id, type: 'credit', amount: '1.00', note: 'same' }, key);
    expect(first.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('answers a GET with a Range header 200 with the whole JSON, not a 206 slice', async () => {
    const res = await send('GET', '/ledger/members', undefined, { range: 'bytes=0-4' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-range']).toBeUndefined();
    expect(res.headers['accept-ranges']).toBeUndefined();
    expect(() => JSON.parse(res.payload)).not.toThrow();
  });

  it('answers an error in an _envelope whole too, and the index, the probes and an unknown route', async () => {
    const enveloped = await send('GET', '/ledger/entries/999999?_envelope', undefined, { range: 'bytes=0-4' });
    expect(enveloped.statusCode).toBe(200);
    expect(JSON.parse(enveloped.payload)).toMatchObject({ status: 404, body: { code: 'svc_entry_not_found' } });
    for (const url of [`${NS}`, '/wp-json/', '/healthz', `${NS}/nowhere`]) {
      const res = await api.server.inject({ url, headers: { range: 'bytes=0-4' } });
      expect(res.statusCode, url).not.toBe(206);
      expect(res.headers['content-range'], url).toBeUndefined();
      expect(() => JSON.parse(res.payload), url).not.toThrow();
    }
  });

  it('keeps ranges on the media files, plain bytes', async () => {
    await addAdvertiser(use().ctx, 'awin', 'range-logo', { logo_url: `${web.origin}/logo.png` });
    const logo = (await send('POST', '/advertisers/awin/range-logo/logo', {})).result as Json;
    const whole = await api.server.inject({ url: logo.logo });
    expect(whole.statusCode).toBe(200);
    const part = await api.server.inject({ url: logo.logo, headers: { range: 'bytes=0-9' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-9/${whole.rawPayload.length}`);
    expect(part.rawPayload).toEqual(whole.rawPayload.subarray(0, 10));
  });
});
