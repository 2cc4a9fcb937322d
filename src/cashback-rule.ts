// The shape of a cashback rule (percent of commission, percent of sale, or a flat amount), below
// the services: the configuration, the custom network definitions and the cashback domain all
// validate a rule the same way.
import { ServiceError } from './errors.js';
import { currencyExponent, formatAmount, parseAmount, parsePercent } from './money.js';

export const CASHBACK_TYPES = ['percent_commission', 'percent_sale', 'flat'] as const;
export type CashbackType = (typeof CASHBACK_TYPES)[number];

/** A rule as stored and shown: `value` is a percent ("50", "12.5") or, for flat, an amount in `currency`. */
export interface CashbackRule {
  type: CashbackType;
  value: string;
  currency: string | null;
}

/** The error of a rule that does not validate (400 svc_invalid_cashback_rule), naming the field. */
export function invalidRule(field: string, message: string): ServiceError {
  return new ServiceError('svc_invalid_cashback_rule', message, 400, { field });
}

/** "050.50" → "50.5": the canonical text of a valid percentage. */
function canonicalPercent(text: string): string {
  const [whole, fraction = ''] = text.trim().split('.');
  const w = whole.replace(/^0+(?=\d)/, '');
  const f = fraction.replace(/0+$/, '');
  return f ? `${w}.${f}` : w;
}

/** Validates and normalises a rule; flat rules get the site currency when none is given. */
export function normaliseRule(type: unknown, value: unknown, currency: unknown, siteCurrency: string): CashbackRule {
  if (typeof type !== 'string' || !(CASHBACK_TYPES as readonly string[]).includes(type)) {
    throw invalidRule('type', `type must be one of ${CASHBACK_TYPES.join(', ')}.`);
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw invalidRule('value', 'value must be a decimal string.');
  if (type === 'flat') {
    const code = currency === undefined || currency === null || currency === '' ? siteCurrency : String(currency);
    currencyExponent(code);
    const minor = parseAmount(value, code, { allowZero: true, field: 'value' });
    return { type, value: formatAmount(minor, code), currency: code };
  }
  if (currency !== undefined && currency !== null && currency !== '') throw invalidRule('currency', 'Only a flat rule has a currency.');
  parsePercent(value, 'value');
  return { type: type as CashbackType, value: canonicalPercent(String(value)), currency: null };
}
