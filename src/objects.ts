// Objects whose keys someone else chose: a query, a body, `_fields`, a config file, a network's
// feed or definition. On an ordinary object `o[k] = v` with k = "__proto__" replaces o's prototype,
// and a walk along "constructor.prototype" or "__proto__" reaches Object.prototype, which every
// object in the process shares: one write there breaks every later request. So such keys are read
// as own properties only, written onto objects without a prototype, and the three segments that
// lead to a prototype are refused where a path is walked.

/** Path segments that lead from an object to a prototype. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export function isPrototypeKey(key: string): boolean {
  return PROTOTYPE_KEYS.has(key);
}

/** An empty object with no prototype: any key set on it is plain data. */
export function dict<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `obj[key]` when obj itself has it, never a value inherited from a prototype. */
export function own(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}
