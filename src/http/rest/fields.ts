// `_fields`: the fields a client asks of a response, read from the query and kept from the
// response, without any field name reaching a prototype.
import { ServiceError } from '../../errors.js';
import { dict, isPrototypeKey } from '../../objects.js';

export function parseFields(value: unknown): string[] | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const fields = value.split(/[\s,]+/).filter(Boolean);
  // A segment that leads to a prototype names no field of any response: refused, so that no walk
  // below can reach Object.prototype (and a client learns its request was wrong).
  const bad = fields.find((f) => f.split('.').some(isPrototypeKey));
  if (bad) {
    const message = `_fields may not name __proto__, constructor or prototype (got "${bad.slice(0, 64)}").`;
    throw new ServiceError('rest_invalid_param', 'Invalid parameter(s): _fields', 400, {
      params: { _fields: message },
      details: { _fields: { code: 'rest_invalid_param', message, data: null } },
    });
  }
  return fields;
}

/**
 * Keeps only the requested fields (dot notation for nested keys). Reads own properties only and
 * builds the output on objects without a prototype, so no field name can reach a prototype.
 */
export function pickFields(item: unknown, fields: string[]): unknown {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return item;
  const out = dict();
  // Objects made here; a value copied whole from the item (`a` before `a.b`) is never written into.
  const made = new Set<object>([out]);
  for (const field of fields) {
    const parts = field.split('.');
    if (parts.some(isPrototypeKey)) continue;
    let src: unknown = item;
    let dst = out;
    for (let i = 0; i < parts.length; i++) {
      const key = parts[i];
      if (!src || typeof src !== 'object' || !Object.hasOwn(src, key)) break;
      src = (src as Record<string, unknown>)[key];
      if (i === parts.length - 1) {
        if (!Object.hasOwn(dst, key)) dst[key] = src;
        break;
      }
      if (!Object.hasOwn(dst, key)) {
        const child = dict();
        made.add(child);
        dst[key] = child;
      }
      const next = dst[key];
      if (!next || typeof next !== 'object' || !made.has(next)) break;
      dst = next as Record<string, unknown>;
    }
  }
  return out;
}
