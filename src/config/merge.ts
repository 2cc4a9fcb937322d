// Reading the JSON files and laying them, the variables and the overrides over one another; keys
// that would reach a prototype are refused wherever they come from.
import { readFileSync } from 'node:fs';
import { ServiceError } from '../errors.js';
import { isPrototypeKey, own } from '../objects.js';

export function readJson(file: string): Record<string, unknown> {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ServiceError('svc_invalid_config', `Cannot read configuration file ${file}: ${(err as Error).message}`, 500);
  }
  refusePrototypeKeys(value, '');
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Keys of a configuration file or override that would reach a prototype when merged are refused by
 * name (the file and the overrides are ours, but a mistake there must not change every object).
 */
function refusePrototypeKeys(value: unknown, where: string): void {
  if (!isPlainObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    const key = where ? `${where}.${k}` : k;
    refusePrototypeKey(k, key);
    refusePrototypeKeys(v, key);
  }
}

function refusePrototypeKey(part: string, key: string): void {
  if (isPrototypeKey(part)) throw new ServiceError('svc_invalid_config', `Invalid configuration ${key}: "${part}" cannot be a configuration key`, 500, { key });
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const current = own(out, k);
    out[k] = isPlainObject(v) && isPlainObject(current) ? deepMerge(current, v) : v;
  }
  return out;
}

export function getPath(obj: Record<string, unknown>, key: string): unknown {
  return key.split('.').reduce<unknown>((o, k) => own(o, k), obj);
}

export function setPath(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  for (const part of parts) refusePrototypeKey(part, key);
  refusePrototypeKeys(value, key);
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(own(cur, part))) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]] = value;
}
