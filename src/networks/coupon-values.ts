// What the network modules share to read coupons: a discount from the text a network gives
// ("10%", "500 RUB", "£10 off", "Free delivery"), and list positions of walks over several lists.
import type { NetworkCoupon } from './types.js';

type Discount = NonNullable<NetworkCoupon['discount']>;

const SYMBOLS: Record<string, string> = { '£': 'GBP', $: 'USD', '€': 'EUR', '₽': 'RUB', '¥': 'JPY', '₹': 'INR', '₴': 'UAH', '₺': 'TRY', zł: 'PLN' };

const number = (s: string): string | null => {
  const n = s.replace(/\s/g, '').replace(',', '.');
  return /^\d{1,20}(\.\d{1,8})?$/.test(n) ? n.replace(/\.0+$/, '').replace(/(\.\d*?)0+$/, '$1') : null;
};

/**
 * The discount a network's text states: a percentage ("10%", "up to 15 % off"), an amount with a
 * currency code or symbol ("500 RUB", "£10 off", "10 EUR"), free shipping, or `other` with the
 * text kept. `currency` is the amount's currency when the text names none.
 */
export function discountFromText(value: unknown, currency: string | null = null): Discount | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim();
  if (!text) return null;
  const shown = text.slice(0, 191);
  const percent = /(\d+(?:[.,]\d+)?)\s*%/.exec(text);
  if (percent) return { type: 'percent', value: number(percent[1]), currency: null, text: shown };
  if (/free\s+(shipping|delivery|postage)|бесплатн\S*\s+доставк/i.test(text)) return { type: 'free_shipping', value: null, currency: null, text: shown };
  const coded = /(\d+(?:[.,]\d+)?)\s*([A-Z]{3})\b/.exec(text) ?? /\b([A-Z]{3})\s*(\d+(?:[.,]\d+)?)/.exec(text);
  if (coded) {
    const [amount, code] = /^\d/.test(coded[1]) ? [coded[1], coded[2]] : [coded[2], coded[1]];
    return { type: 'amount', value: number(amount), currency: code, text: shown };
  }
  const symbol = /(£|\$|€|₽|¥|₹|₴|₺|zł)\s*(\d+(?:[.,]\d+)?)|(\d+(?:[.,]\d+)?)\s*(£|\$|€|₽|¥|₹|₴|₺|zł)/.exec(text);
  if (symbol) return { type: 'amount', value: number(symbol[2] ?? symbol[3]), currency: SYMBOLS[symbol[1] ?? symbol[4]], text: shown };
  if (/^\d+(?:[.,]\d+)?$/.test(text) && currency) return { type: 'amount', value: number(text), currency, text: shown };
  return { type: 'other', value: null, currency: null, text: shown };
}

/**
 * A position in a walk over several lists one after the other (`list:position`), so a resumed
 * refresh starts in the right list. `lists` names them in walk order; null: from the start.
 */
export function walkPosition<L extends string>(after: string | null, lists: readonly L[], network: string): { list: L; position: string | null } {
  if (after === null) return { list: lists[0], position: null };
  const m = /^([a-z_]+):([1-9]\d{0,14})$/.exec(after);
  if (!m || !(lists as readonly string[]).includes(m[1])) throw new Error(`${network}: "${after.slice(0, 40)}" is not a position in the coupon lists`);
  return { list: m[1] as L, position: m[2] };
}
