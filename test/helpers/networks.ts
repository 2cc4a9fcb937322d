// Network test doubles: a custom network definition and a fake built-in module, and postback
// request helpers (token and HMAC-signed).
import { createHmac } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import type { Context } from '../../src/context.js';
import { PostbackParams, pickFields } from '../../src/networks/postback.js';
import type { NetworkModule } from '../../src/networks/types.js';

/** A custom network mapping every postback field. */
export function shopnetDefinition(over: Record<string, unknown> = {}): Record<string, any> {
  return {
    name: 'Shop Net',
    currency: 'EUR',
    cashback: { type: 'percent_commission', value: '50' },
    tracking_link: 'https://go.shopnet.test/c/{advertiser_id}?aff=77&subid={sub_id}&url={url}',
    statuses: { pending: 'pending', approved: 'approved', validated: 'approved', rejected: 'declined' },
    postback: {
      params: {
        transaction_id: 'txn',
        status: 'status',
        sale_amount: 'amount',
        commission: 'payout',
        currency: 'cur',
        sub_id: 'subid',
        advertiser_id: 'program',
        merchant_ref: 'order_id',
        event_time: 'date',
      },
    },
    ...over,
  };
}

/** A built-in module double with its own parameter names and status words. */
export function fakeModule(id = 'fakenet'): NetworkModule {
  return {
    id,
    name: 'Fake Net',
    defaultCurrency: 'USD',
    configKeys: [
      { name: 'publisherId', description: 'Publisher id', required: true, secret: false },
      { name: 'apiToken', description: 'API token', required: true, secret: true },
      { name: 'region', description: 'Region', required: false, secret: false },
    ],
    isConfigured: (s) => !!s.publisherId && !!s.apiToken,
    async *listAdvertisers() {},
    async getAdvertiser() {
      return null;
    },
    async *listTransactions() {},
    limits: { maxWindowDays: 31, maxLookbackDays: null },
    trackingLink: (s, i) => `https://fake.test/c?pub=${s.publisherId}&adv=${i.advertiser_id}&sub=${encodeURIComponent(i.sub_id)}`,
    parsePostback(query, body) {
      const p = PostbackParams.read(query, body);
      return pickFields(p, {
        transaction_id: ['tid'],
        status: ['state'],
        commission: ['comm'],
        sale_amount: ['sale'],
        sub_id: ['clickref'],
        currency: ['cur'],
      });
    },
    statusMap: { NEW: 'pending', OK: 'approved', REVERSED: 'declined' },
    postbackTemplate: 'tid={tid}&state={state}&sale={sale}&comm={comm}&cur={cur}&clickref={clickref}',
  };
}

export function query(params: Record<string, string | string[]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of ([] as string[]).concat(v)) q.append(k, x);
  return q.toString();
}

/**
 * `X-Postback-Signature` for a raw query string or body, at unix time `t` (default now), built
 * from the wire format in docs/api.md with node:crypto, not with the code under test:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<payload>", keyed with the secret as ASCII>`.
 */
export function signature(secret: string, payload: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', Buffer.from(secret, 'ascii')).update(`${t}.${payload}`).digest('hex')}`;
}

export interface Sent {
  status: number;
  body: Record<string, any>;
  headers: Record<string, unknown>;
}

/** GET /postback/{network}?{raw} with optional headers and client address. */
export async function getPostback(server: Server, network: string, raw: string, headers: Record<string, string> = {}, remoteAddress?: string): Promise<Sent> {
  const res = await server.inject({ method: 'GET', url: `/postback/${network}${raw ? `?${raw}` : ''}`, headers, remoteAddress });
  return { status: res.statusCode, body: JSON.parse(res.payload || 'null'), headers: res.headers };
}

export async function postPostback(
  server: Server,
  network: string,
  body: string | Buffer,
  contentType: string,
  headers: Record<string, string> = {},
  raw = '',
): Promise<Sent> {
  const res = await server.inject({
    method: 'POST',
    url: `/postback/${network}${raw ? `?${raw}` : ''}`,
    payload: body,
    headers: { 'content-type': contentType, ...headers },
  });
  return { status: res.statusCode, body: JSON.parse(res.payload || 'null'), headers: res.headers };
}

/** Puts an advertiser on file, as a sync would have (a manual order may only name a known one). */
export async function addAdvertiser(ctx: Context, module: string, advertiser: string, name = `Shop ${advertiser}`): Promise<void> {
  const now = new Date();
  await ctx.db.execute(
    "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, '[]', '[]', 'active', 1, ?, ?)",
    [module, advertiser, name, now, now],
  );
}
