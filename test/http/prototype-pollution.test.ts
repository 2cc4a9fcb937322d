import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { shopnetDefinition } from '../helpers/networks.js';
import { pickFields } from '../../src/http/rest/fields.js';

// Keys a client names that would reach Object.prototype if any code copied them naively.
const FIELDS_ATTACKS = [
  'namespaces.__proto__.join',
  '__proto__.polluted',
  'constructor.prototype.polluted',
  'id,routes.__proto__.polluted',
  'a.constructor.prototype.polluted',
];
const QUERY_ATTACK = [
  '__proto__[polluted]=1',
  '__proto__.polluted=1',
  'constructor[prototype][polluted]=1',
  'constructor.prototype.polluted=1',
  'a[__proto__][polluted]=1',
  '_envelope[__proto__][polluted]=1',
  '__proto__=1',
  'constructor=1',
].join('&');
const JSON_ATTACKS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"\\u005f_proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"a":{"__proto__":{"polluted":"yes"}},"b":[{"constructor":{"prototype":{"polluted":"yes"}}}]}',
  '{"login":"x","password":"y","__proto__":{"polluted":"yes"}}',
];
const FORM_ATTACKS = [
  '__proto__[polluted]=1&constructor[prototype][polluted]=1',
  'a[__proto__][polluted]=1&__proto__=x&constructor=y&prototype=z',
  '__proto__.polluted=1&login=x&password=y',
];

describe('pickFields', () => {
  it('follows own keys only and never writes into a prototype or into the response it filters', () => {
    const item = JSON.parse('{"a":{"b":1,"c":2},"list":[{"x":1}],"__proto__":{"d":3}}');
    const before = snapshot();
    const out = pickFields(item, ['a', 'a.b', 'list.__proto__.polluted', 'list.0.x', 'toString', 'a.constructor.name', '__proto__.d']) as Record<
      string,
      unknown
    >;
    expect(snapshot()).toEqual(before);
    expect(JSON.parse(JSON.stringify(out))).toEqual({ a: { b: 1, c: 2 }, list: { 0: { x: 1 } } });
    expect(Object.getPrototypeOf(out)).toBeNull();
    expect(item.a).toEqual({ b: 1, c: 2 });
  });
});

function snapshot() {
  return {
    object: Object.getOwnPropertyNames(Object.prototype).sort(),
    array: Object.getOwnPropertyNames(Array.prototype).sort(),
    func: Object.getOwnPropertyNames(Function.prototype).sort(),
  };
}

describeEachDialect(
  'keys a client names never reach a prototype',
  (use) => {
    let server: Server;
    let admin: Actor;
    let token: string;
    const before = snapshot();

    beforeAll(async () => {
      const { ctx } = use();
      server = await testServer(ctx);
      admin = await createActor(ctx, 'administrator');
      await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
      token = (await ctx.networks.rotatePostbackSecret('shopnet', 'test')).secret;
      await ctx.networks.setPostbacks('shopnet', true, 'test');
    });
    afterAll(async () => {
      await server.stop();
    });

    it('leaves Object.prototype untouched after polluting paths are sent to every route, and every route still answers', async () => {
      const routes = server.table().map((r) => ({
        method: r.method.toUpperCase(),
        // Path parameters: a network that exists for the postback endpoint, a number elsewhere.
        path: r.path.replace('{network}', 'shopnet').replace(/\{\w+\}/g, '1'),
      }));
      expect(routes.length).toBeGreaterThan(30);
      const statuses: string[] = [];
      const send = async (method: string, url: string, headers: Record<string, string>, payload?: string) => {
        const res = await server.inject({ method, url, headers, payload });
        statuses.push(`${res.statusCode} ${method} ${url}`);
        expect(res.statusCode, `${method} ${url} ${payload ?? ''}: ${res.payload.slice(0, 300)}`).toBeLessThan(500);
        return res;
      };
      for (const { method, path } of routes) {
        // A postback that would be accepted but for what the attack adds, so it is read through.
        const base = path.startsWith('/postback/') ? `${path}?token=${token}&txn=PP-${method}&status=pending&amount=10.00&payout=1.00&cur=EUR&` : `${path}?`;
        for (const who of [{}, { authorization: admin.authorization }] as Record<string, string>[]) {
          for (const fields of FIELDS_ATTACKS) await send(method, `${base}_fields=${encodeURIComponent(fields)}`, who);
          await send(method, `${base}_envelope&_fields=${encodeURIComponent(FIELDS_ATTACKS.join(','))}`, who);
          await send(method, `${base}${QUERY_ATTACK}`, who);
          if (method === 'GET') continue;
          for (const body of JSON_ATTACKS) {
            await send(method, base.slice(0, -1), { ...who, 'content-type': 'application/json' }, body);
            await send(method, `${base}_envelope`, { ...who, 'content-type': 'application/json' }, body);
          }
          for (const body of FORM_ATTACKS) await send(method, base.slice(0, -1), { ...who, 'content-type': 'application/x-www-form-urlencoded' }, body);
        }
      }
      // Through the method override and the ?rest_route= form too.
      await send('POST', `${NS}/orders?_method=GET&_fields=${encodeURIComponent('__proto__.polluted')}`, { authorization: admin.authorization });
      await send('GET', `/?rest_route=/&_fields=${encodeURIComponent('namespaces.__proto__.join')}`, {});
      expect(statuses.length).toBeGreaterThan(500);

      expect(snapshot()).toEqual(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(([] as unknown as Record<string, unknown>).join).toBe(Array.prototype.join);

      // The process still serves: the index, an administrator's list, a login, a postback.
      expect((await server.inject({ url: '/wp-json/' })).statusCode).toBe(200);
      const list = await server.inject({ url: `${NS}/logs?_fields=id,level`, headers: { authorization: admin.authorization } });
      expect(list.statusCode).toBe(200);
      const login = await server.inject({ method: 'POST', url: '/login', payload: { login: admin.login, password: 'correct horse battery' } });
      expect(login.statusCode).toBe(200);
      const postback = await server.inject({ url: `/postback/shopnet?token=${token}&txn=PP-1&status=pending&amount=10.00&payout=1.00&cur=EUR` });
      expect(postback.statusCode, postback.payload).toBe(200);
    });

    it('names a parameter called constructor, prototype or __proto__ like any other in a 400', async () => {
      const res = await server.inject({ url: `${NS}/logs?constructor=1&prototype=2&__proto__=3`, headers: { authorization: admin.authorization } });
      expect(res.statusCode).toBe(400);
      const body = JSON.parse(res.payload);
      expect(body.code).toBe('rest_invalid_param');
      for (const name of ['constructor', 'prototype']) {
        expect(body.data.params[name]).toBe(`${name} is not allowed`);
        expect(body.data.details[name]).toMatchObject({ code: 'rest_additional_properties_forbidden' });
      }
    });

    it('reads a custom network setting named constructor or toString as unset until it is set', async () => {
      const { ctx } = use();
      const settings = [
        { name: 'constructor', required: true },
        { name: 'toString', required: true },
      ];
      const { network } = await ctx.networks.saveCustom(
        'oddnet',
        shopnetDefinition({ name: 'Odd Net', settings, tracking_link: 'https://go.odd.test/c?s={settings.toString}&sub={sub_id}' }),
        'test',
      );
      expect(network.configured).toBe(false);
      expect(network.settings).toEqual({});
      await expect(ctx.networks.requireUsable('oddnet')).rejects.toMatchObject({ code: 'svc_network_not_configured' });
      const set = await ctx.networks.configure('oddnet', { constructor: 'c-1', toString: 't-1' }, 'test');
      expect(set.configured).toBe(true);
      expect(set.settings).toEqual({ constructor: 'c-1', toString: 't-1' });
    });

    it('answers _fields naming __proto__, constructor or prototype with 400 rest_invalid_param naming _fields', async () => {
      for (const fields of FIELDS_ATTACKS) {
        const res = await server.inject({ url: `${NS}/logs?_fields=${encodeURIComponent(fields)}`, headers: { authorization: admin.authorization } });
        expect(res.statusCode).toBe(400);
        expect(res.result).toMatchObject({
          code: 'rest_invalid_param',
          data: { params: { _fields: expect.stringContaining('__proto__, constructor or prototype') } },
        });
      }
    });

    it('keeps _fields working on own nested keys, copying a whole value only once', async () => {
      const res = await server.inject({ url: `/wp-json/?_fields=${encodeURIComponent('name,routes,routes./svc/v1/logs.methods,nothing.here')}` });
      expect(res.statusCode).toBe(200);
      const body = JSON.parse(res.payload);
      expect(Object.keys(body).sort()).toEqual(['name', 'routes']);
      expect(body.routes['/svc/v1/logs'].methods).toEqual(['GET']);
      expect(body.routes['/svc/v1/logs'].endpoints).toBeDefined();
    });
  },
  { 'postbacks.enabled': true },
);
