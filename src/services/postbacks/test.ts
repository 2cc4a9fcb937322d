// Test postbacks: a postback in the network's own format, marked `test=1` and authenticated, sent
// over real HTTP to this daemon's public postback URL, so the switches, the address, the proxy,
// the authentication and the parsing are all exercised. The endpoint stores it as a test record
// and never records an order for it.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config/index.js';
import { ServiceError } from '../../errors.js';
import type { NetworkModule, PostbackFields } from '../../networks/types.js';
import type { Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import { notFound, type NetworkService, type PostbackTarget } from '../networks/index.js';
import type { OrderStatus } from '../orders/index.js';
import { SIGNATURE_HEADER, signPayload, testSigningKey } from './auth.js';
import type { PostbackRecord, PostbackStore } from './records.js';
import type { SelfUrl } from '../../self-url.js';

export interface TestInput {
  status?: OrderStatus;
  /** Sale amount, a decimal string in the network's currency (default 100.00). */
  amount?: string;
  /** Commission (default 10.00). */
  commission?: string;
  sub_id?: string;
}

export interface TestResult {
  request: { method: 'GET'; url: string; headers: Record<string, string> };
  response: { status: number; body: unknown } | null;
  /** The record the endpoint stored for it (null if it stored none, e.g. the URL reached another server). */
  record: PostbackRecord | null;
}

export interface PostbackTesterDeps {
  clock: Clock;
  logger: LogService;
  keys: Keys;
  networks: NetworkService;
  config: Pick<Config, 'postbacks'>;
  store: PostbackStore;
  /** The daemon's own base URL, where the test postback goes. */
  selfUrl: Pick<SelfUrl, 'get'>;
}

const TIMEOUT_MS = 10_000;

function unsupported(message: string): ServiceError {
  return new ServiceError('svc_postback_test_unsupported', message, 409);
}

/**
 * Which parameter carries which field for a built-in module: its postback template with a marker
 * in each value, read back through the module's own parser.
 */
export function templateMapping(module: NetworkModule): Partial<Record<keyof PostbackFields, string>> | null {
  if (!module.postbackTemplate) return null;
  const pairs = module.postbackTemplate
    .split('&')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p.split('=')[0].replace(/\+/g, ' ')));
  const query = Object.fromEntries(pairs.map((name, i) => [name, `ctmark${i}x`]));
  let fields: PostbackFields;
  try {
    fields = module.parsePostback(query, undefined);
  } catch {
    return null;
  }
  const out: Partial<Record<keyof PostbackFields, string>> = {};
  for (const [field, value] of Object.entries(fields) as [keyof PostbackFields, string][]) {
    const m = /^ctmark(\d+)x$/i.exec(String(value));
    if (m) out[field] = pairs[Number(m[1])];
  }
  return out;
}

export class PostbackTester {
  constructor(private readonly deps: PostbackTesterDeps) {}

  async send(id: string, input: TestInput, actor: string): Promise<TestResult> {
    const target = await this.deps.networks.postbackTarget(id);
    if (!target) throw notFound(id);
    const off: string[] = [];
    if (!this.deps.config.postbacks.enabled) off.push('the global switch: set CASHTRACK_POSTBACKS_ENABLED=true (postbacks.enabled) and restart the daemon');
    if (!target.postbacksEnabled) off.push(`the network's switch: run \`cashtrack networks postbacks ${id} on\` (or POST /networks/${id}/postback)`);
    if (off.length) {
      throw new ServiceError('svc_postbacks_disabled', `Postbacks are switched off. Turn on ${off.join('; and ')}.`, 409, {
        switches: { global: this.deps.config.postbacks.enabled, network: target.postbacksEnabled },
      });
    }
    if (!target.secret)
      throw new ServiceError(
        'svc_postback_secret_missing',
        `Network ${id} has no postback secret yet: run \`cashtrack networks postback-secret ${id} --rotate\` first.`,
        409,
        { network: id },
      );
    const base = this.deps.selfUrl.get();
    if (!base)
      throw new ServiceError('svc_postback_url_unknown', 'The daemon does not know its own URL yet: set CASHTRACK_PUBLIC_URL (server.public_url).', 503);

    const query = new URLSearchParams({ ...this.params(target, input), test: '1' }).toString();
    const t = Math.floor(this.deps.clock.now().getTime() / 1000);
    const signature =
      target.mode === 'hmac' && target.secret.startsWith('e1:')
        ? `t=${t},v1=${signPayload(this.deps.networks.openPostbackSecret(id, target.secret), t, query)}`
        : `t=${t},test=${signPayload(testSigningKey(this.deps.keys.postback, id), t, query)}`;
    const url = `${base}/postback/${id}?${query}`;
    const request: TestResult['request'] = { method: 'GET', url, headers: { 'X-Postback-Signature': '[redacted]' } };

    let res: Response;
    try {
      res = await fetch(url, {
        headers: { [SIGNATURE_HEADER]: signature, 'User-Agent': 'cashtrack-postback-test' },
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      this.deps.logger.warning('postbacks', 'Test postback could not be sent', { network: id, url: `${base}/postback/${id}`, error: cause, actor });
      throw new ServiceError(
        'svc_postback_test_failed',
        `The test postback could not reach ${base}/postback/${id} (${cause}). Check CASHTRACK_PUBLIC_URL and the proxy in front of the daemon.`,
        502,
        { url: `${base}/postback/${id}` },
      );
    }
    const text = await res.text().catch(() => '');
    let body: unknown = text.slice(0, 2000);
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: shown as text */
    }
    const requestId = res.headers.get('x-request-id');
    const record = requestId ? await this.deps.store.byRequest(id, requestId) : null;
    this.deps.logger.info('postbacks', 'Test postback sent', {
      network: id,
      status: res.status,
      postback_id: record?.id ?? null,
      outcome: record?.outcome ?? null,
      actor,
    });
    return { request, response: { status: res.status, body }, record };
  }

  /** The test postback's parameters, in the network's own names. */
  private params(target: PostbackTarget, input: TestInput): Record<string, string> {
    const mapping = target.kind === 'custom' ? (target.mapping ?? {}) : templateMapping(target.module);
    if (!mapping?.transaction_id)
      throw unsupported(`${target.module.name} gives no postback template, so cashtrack cannot build a test postback in its format.`);
    const status = input.status ?? 'pending';
    const out: Record<string, string> = {};
    const set = (field: keyof PostbackFields, value: string | undefined) => {
      if (value !== undefined && mapping[field]) out[mapping[field]!] = value;
    };
    let word: string | undefined;
    if (mapping.status) {
      word = Object.keys(target.module.statusMap).find((w) => target.module.statusMap[w] === status);
      if (!word) throw unsupported(`The status mapping of ${target.module.name} has no word for ${status}.`);
    } else if (status !== 'pending') {
      throw unsupported(`${target.module.name}'s postbacks carry no status (they are pending); a ${status} test cannot be sent.`);
    }
    set('transaction_id', `test-${randomBytes(6).toString('hex')}`);
    set('status', word);
    set('sale_amount', input.amount ?? '100.00');
    set('commission', input.commission ?? '10.00');
    set('currency', target.module.defaultCurrency);
    set('sub_id', input.sub_id);
    set('event_time', this.deps.clock.now().toISOString());
    return out;
  }
}
