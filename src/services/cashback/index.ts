// Cashback rules: the member's share of an order. Per network a default (advertiser ''), per
// advertiser an optional override, and the configured default behind both. Amounts are minor
// units; the member's cashback rounds down and never exceeds the commission (the rest is the site's).
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { applyRate, parseAmount, parsePercent } from '../../money.js';
import { CASHBACK_TYPES, invalidRule, normaliseRule, type CashbackRule, type CashbackType } from '../../cashback-rule.js';
import type { LogService } from '../logs/index.js';

/** Network ids and network transaction ids: printable ASCII without spaces (stored as ASCII on MariaDB). */
export const ASCII_ID = /^[\x21-\x7e]+$/;
/** Advertiser ids: printable ASCII; spaces allowed (some networks key shops by name). */
export const ASCII_TEXT = /^[\x20-\x7e]+$/;

/** A rule with where it applies and where it came from. */
export interface ScopedCashbackRule extends CashbackRule {
  network: string;
  /** null: the network default. */
  advertiser: string | null;
  /** `advertiser` override, `network` default, or the configured `default`. */
  source: 'advertiser' | 'network' | 'default';
  updated_at: string | null;
}

export interface CashbackServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  /** `cashback.default_type` / `default_value` from the configuration. */
  defaults: { default_type: CashbackType; default_value: string };
  /** The site currency: a flat default is in it. */
  currency: string;
  hooks: HookBus;
}

/** The key of a (network, advertiser) pair in `resolveMany`'s answer. */
export function ruleKey(network: string, advertiser: string | null): string {
  return `${network}\0${advertiser ?? ''}`;
}

/** Validates a network id (1-64 printable ASCII characters, no spaces). */
export function checkNetwork(network: unknown, code = 'svc_invalid_cashback_rule'): string {
  if (typeof network !== 'string' || network.length > 64 || !ASCII_ID.test(network)) {
    throw new ServiceError(code, 'network must be 1 to 64 printable ASCII characters without spaces.', 400, { field: 'network' });
  }
  return network;
}

/** Validates an advertiser id (trimmed, 1-128 printable ASCII characters); '' and null mean none. */
export function checkAdvertiser(advertiser: unknown, code = 'svc_invalid_cashback_rule'): string | null {
  if (advertiser === null || advertiser === undefined) return null;
  const text = typeof advertiser === 'string' ? advertiser.trim() : advertiser;
  if (text === '') return null;
  if (typeof text !== 'string' || text.length > 128 || !ASCII_TEXT.test(text)) {
    throw new ServiceError(code, 'advertiser must be at most 128 printable ASCII characters.', 400, { field: 'advertiser' });
  }
  return text;
}

/** "percent_commission:50", "flat:5.00:USD": the rule as kept on an order. */
export function encodeRule(rule: CashbackRule): string {
  return rule.type === 'flat' ? `flat:${rule.value}:${rule.currency}` : `${rule.type}:${rule.value}`;
}

export function decodeRule(text: unknown): CashbackRule | null {
  if (typeof text !== 'string' || !text) return null;
  const [type, value, currency] = text.split(':');
  if (!(CASHBACK_TYPES as readonly string[]).includes(type) || !value) return null;
  return { type: type as CashbackType, value, currency: type === 'flat' ? (currency ?? null) : null };
}

/** Sets, reads and resolves cashback rules, and computes an order's cashback from one. */
export class CashbackRuleService {
  constructor(private readonly deps: CashbackServiceDeps) {}

  /** The configured default, as a rule. */
  get defaultRule(): CashbackRule {
    const { default_type, default_value } = this.deps.defaults;
    return { type: default_type, value: default_value, currency: default_type === 'flat' ? this.deps.currency : null };
  }

  /**
   * Sets the rule of a network (advertiser null or '') or of one advertiser of it. Percent values
   * are 0-100 with up to 6 decimals; a flat value is an amount in `currency` (default: the site's).
   */
  async set(
    network: string,
    advertiser: string | null,
    type: CashbackType,
    value: string,
    currency?: string | null,
    actor = 'system',
  ): Promise<ScopedCashbackRule> {
    try {
      const net = checkNetwork(network);
      const adv = checkAdvertiser(advertiser);
      const rule = normaliseRule(type, value, currency, this.deps.currency);
      const now = this.deps.clock.now();
      const params = [net, adv ?? '', rule.type, rule.value, rule.currency, now];
      const sql = this.deps.db.upsert(
        'cashback_rules',
        ['network', 'advertiser', 'type', 'value', 'currency', 'updated_at'],
        ['network', 'advertiser'],
        ['type', 'value', 'currency', 'updated_at'],
      );
      await this.deps.db.execute(sql, params);
      this.deps.logger.info('cashback', 'Cashback rule set', {
        network: net,
        advertiser: adv,
        type: rule.type,
        value: rule.value,
        currency: rule.currency,
        actor,
      });
      return { ...rule, network: net, advertiser: adv, source: adv === null ? 'network' : 'advertiser', updated_at: now.toISOString() };
    } catch (err) {
      if (err instanceof ServiceError)
        this.deps.logger.warning('cashback', 'Cashback rule refused', {
          code: err.code,
          network: String(network).slice(0, 64),
          advertiser: advertiser === null ? null : String(advertiser).slice(0, 128),
          type: String(type).slice(0, 24),
          actor,
        });
      throw err;
    }
  }

  /** Removes a network default or an advertiser override; true when there was one. */
  async remove(network: string, advertiser: string | null, actor = 'system'): Promise<boolean> {
    const net = checkNetwork(network);
    const adv = checkAdvertiser(advertiser);
    const { affected } = await this.deps.db.execute('DELETE FROM cashback_rules WHERE network = ? AND advertiser = ?', [net, adv ?? '']);
    if (affected > 0) this.deps.logger.info('cashback', 'Cashback rule removed', { network: net, advertiser: adv, actor });
    return affected > 0;
  }

  /** The rule stored at exactly this scope (advertiser null: the network default), or null. */
  async get(network: string, advertiser: string | null): Promise<ScopedCashbackRule | null> {
    const net = checkNetwork(network);
    const adv = checkAdvertiser(advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      'SELECT advertiser, type, value, currency, updated_at FROM cashback_rules WHERE network = ? AND advertiser = ?',
      [net, adv ?? ''],
    );
    return row ? this.toScoped(net, row) : null;
  }

  /** Every stored rule of a network (or of all networks), network defaults first. */
  async list(network?: string): Promise<ScopedCashbackRule[]> {
    const rows = network
      ? await this.deps.db.select<Record<string, unknown>>(
          'SELECT network, advertiser, type, value, currency, updated_at FROM cashback_rules WHERE network = ? ORDER BY advertiser',
          [checkNetwork(network)],
        )
      : await this.deps.db.select<Record<string, unknown>>(
          'SELECT network, advertiser, type, value, currency, updated_at FROM cashback_rules ORDER BY network, advertiser',
        );
    return rows.map((r) => this.toScoped(String(r.network), r));
  }

  /** The effective rule: the advertiser's override, else the network default, else the configured default. */
  async resolve(network: string, advertiser: string | null, t?: Transaction): Promise<ScopedCashbackRule> {
    const net = checkNetwork(network);
    const adv = checkAdvertiser(advertiser);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      'SELECT advertiser, type, value, currency, updated_at FROM cashback_rules WHERE network = ? AND advertiser IN (?, ?)',
      [net, adv ?? '', ''],
      t,
    );
    const row = rows.find((r) => adv !== null && r.advertiser === adv) ?? rows.find((r) => r.advertiser === '');
    if (row) return this.toScoped(net, row);
    return { ...this.defaultRule, network: net, advertiser: null, source: 'default', updated_at: null };
  }

  /**
   * `resolve` for many (network, advertiser) pairs at once: one query per network. The answer is
   * keyed by `ruleKey(network, advertiser)`.
   */
  async resolveMany(pairs: { network: string; advertiser: string | null }[], t?: Transaction): Promise<Map<string, ScopedCashbackRule>> {
    const byNetwork = new Map<string, Set<string>>();
    for (const p of pairs) {
      const net = checkNetwork(p.network);
      const adv = checkAdvertiser(p.advertiser);
      if (!byNetwork.has(net)) byNetwork.set(net, new Set(['']));
      if (adv !== null) byNetwork.get(net)!.add(adv);
    }
    const out = new Map<string, ScopedCashbackRule>();
    for (const [net, advertisers] of byNetwork) {
      const list = [...advertisers];
      const rows = await this.deps.db.select<Record<string, unknown>>(
        `SELECT advertiser, type, value, currency, updated_at FROM cashback_rules WHERE network = ? AND advertiser IN (${list.map(() => '?').join(', ')})`,
        [net, ...list],
        t,
      );
      const stored = new Map(rows.map((r) => [String(r.advertiser), r]));
      const fallback = stored.get('');
      const networkRule = fallback
        ? this.toScoped(net, fallback)
        : { ...this.defaultRule, network: net, advertiser: null, source: 'default' as const, updated_at: null };
      for (const adv of list) {
        const own = adv === '' ? undefined : stored.get(adv);
        out.set(ruleKey(net, adv || null), own ? this.toScoped(net, own) : networkRule);
      }
    }
    return out;
  }

  /**
   * The member's cashback for an order, in minor units of the order currency: rounded down, at
   * least 0, at most the commission. A flat rule converts nothing: in another currency than the
   * order it is refused (409 svc_currency_mismatch).
   */
  compute(rule: CashbackRule, order: { sale: number; commission: number; currency: string }): number {
    let amount: number;
    switch (rule.type) {
      case 'percent_commission':
        amount = applyRate(order.commission, parsePercent(rule.value, 'value'));
        break;
      case 'percent_sale':
        amount = applyRate(order.sale, parsePercent(rule.value, 'value'));
        break;
      case 'flat': {
        const currency = rule.currency ?? this.deps.currency;
        if (currency !== order.currency) {
          throw new ServiceError(
            'svc_currency_mismatch',
            `The flat cashback rule is in ${currency} but the order is in ${order.currency}; cashtrack converts no currencies. Set a percent rule or a flat rule in ${order.currency} for this advertiser.`,
            409,
            {
              rule_currency: currency,
              order_currency: order.currency,
            },
          );
        }
        amount = parseAmount(rule.value, currency, { allowZero: true, field: 'value' });
        break;
      }
      default:
        throw invalidRule('type', `Unknown cashback rule type ${String((rule as CashbackRule).type)}.`);
    }
    // Extensions may change the amount (a promotion, a member tier); the bounds still hold.
    const filtered = this.deps.hooks.applyFilters(HOOKS.cashbackAmount, amount, { rule, order });
    const safe = Number.isSafeInteger(filtered) ? filtered : amount;
    if (safe !== filtered) this.deps.logger.warning('cashback', 'A cashback filter returned a non-integer amount; it was ignored', { rule: rule.type });
    return Math.max(0, Math.min(safe, order.commission));
  }

  private toScoped(network: string, row: Record<string, unknown>): ScopedCashbackRule {
    const advertiser = row.advertiser === '' || row.advertiser === null || row.advertiser === undefined ? null : String(row.advertiser);
    return {
      type: row.type as CashbackType,
      value: String(row.value),
      currency: row.currency === null || row.currency === undefined ? null : String(row.currency),
      network,
      advertiser,
      source: advertiser === null ? 'network' : 'advertiser',
      updated_at: toIso(row.updated_at),
    };
  }
}
