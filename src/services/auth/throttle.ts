// The authentication throttle, in the `auth_throttle` table so that every daemon on the database
// counts together and no flood of other keys can push a counter out (an in-memory LRU could be
// flushed that way). An attempt is counted before its credentials are checked, by one atomic
// UPDATE (or INSERT) per counter, so concurrent attempts can never all slip past the limit; a
// success gives its count back.
//
// Two kinds of counters:
// - `address`: failures from one client address (an IPv4 address or an IPv6 /64) in a fixed
//   window, then 429 until the window ends. It only ever hurts the attacker's own address.
// - `user`: failures for the user the typed login or email resolved to. No hard lock (that would
//   let anyone lock anyone out): after `failures_before_delay` failures, each further attempt
//   must wait a growing delay (1 s, 2 s, 4 s, ... up to `max_delay_seconds`).
import { isIP } from 'node:net';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { toDate, toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';

export interface ThrottleSettings {
  window_seconds: number;
  max_failures_per_address: number;
  failures_before_delay: number;
  max_delay_seconds: number;
}

export interface AuthThrottleDeps {
  db: Database;
  clock: Clock;
  settings: ThrottleSettings;
}

type Kind = 'address' | 'user';

interface Row {
  failures: unknown;
  next_allowed_at: unknown;
  reset_at: unknown;
}

/** The eight 16-bit groups of an IPv6 address (already validated by `isIP`). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const v4 = text.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key a client address is counted under: an IPv4 address as is (also when written as
 * IPv4-mapped IPv6), an IPv6 address by its /64, since one subscriber usually holds a whole /64
 * and can rotate through it at will.
 */
export function addressKey(ip: string | null): string {
  if (!ip) return 'unknown';
  let address = ip.trim().toLowerCase();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return address.slice(0, 64) || 'unknown';
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

function secondsUntil(when: Date, now: Date): number {
  return Math.max(1, Math.ceil((when.getTime() - now.getTime()) / 1000));
}

function tooMany(retryAfter: number): ServiceError {
  return new ServiceError(
    'svc_too_many_attempts',
    `Too many failed authentication attempts. Try again in ${retryAfter} seconds.`,
    429,
    { retry_after: retryAfter },
    { 'Retry-After': String(retryAfter) },
  );
}

/** Counts authentication attempts per address and per user in the database, and refuses the excess. */
export class AuthThrottle {
  private readonly deps: AuthThrottleDeps;

  constructor(deps: AuthThrottleDeps) {
    this.deps = deps;
  }

  /** The delay imposed after the `n`-th failure in a row for one user, in seconds (0: none). */
  delayAfter(n: number): number {
    const { failures_before_delay: free, max_delay_seconds: max } = this.deps.settings;
    return n <= free ? 0 : Math.min(max, 2 ** Math.min(30, n - free - 1));
  }

  /**
   * Counts one attempt from `address` (an `addressKey`) before it is checked. Refuses with 429
   * `svc_too_many_attempts` once the address has used up its window; a refused attempt is not
   * counted. With `enforce: false` the failure is only counted (for failures found without a
   * claim, e.g. a wrong nonce).
   */
  async claimAddress(address: string, enforce = true): Promise<void> {
    const now = this.deps.clock.now();
    const { window_seconds: window, max_failures_per_address: max } = this.deps.settings;
    const resetAt = new Date(now.getTime() + window * 1000);
    // `failures` is assigned before `reset_at`: MariaDB evaluates SET left to right with the new
    // values, SQLite with the old ones, and in this order both see the old reset_at.
    const update = {
      sql: `UPDATE auth_throttle SET failures = CASE WHEN reset_at <= ? THEN 1 ELSE failures + 1 END, reset_at = CASE WHEN reset_at <= ? THEN ? ELSE reset_at END
            WHERE kind = 'address' AND throttle_key = ?${enforce ? ' AND (reset_at <= ? OR failures < ?)' : ''}`,
      params: [now, now, resetAt, address, ...(enforce ? [now, max] : [])],
    };
    await this.claim('address', address, update, [1, null, resetAt], (row) => {
      const reset = toDate(row.reset_at)!;
      return enforce && reset > now && toInt(row.failures) >= max ? tooMany(secondsUntil(reset, now)) : null;
    });
  }

  /** Gives back the count of an attempt from `address` that succeeded. */
  async releaseAddress(address: string): Promise<void> {
    await this.deps.db.execute(
      "UPDATE auth_throttle SET failures = failures - 1 WHERE kind = 'address' AND throttle_key = ? AND failures > 0 AND reset_at > ?",
      [address, this.deps.clock.now()],
    );
  }

  /**
   * Counts one password attempt for a user before it is checked, and sets the delay the next one
   * must wait should this one fail. Refuses with 429 `svc_too_many_attempts` while a delay runs.
   */
  async claimUser(userId: number): Promise<void> {
    const now = this.deps.clock.now();
    const { window_seconds: window, failures_before_delay: free, max_delay_seconds: max } = this.deps.settings;
    // The counter is forgotten after a quiet window (longer than any delay it can impose).
    const resetAt = new Date(now.getTime() + (window + max) * 1000);
    // This attempt's number: 1 after a quiet window, else one more than before.
    const n = '(CASE WHEN reset_at <= ? THEN 1 ELSE failures + 1 END)';
    const steps: string[] = [];
    const params: unknown[] = [];
    for (let k = free + 1; this.delayAfter(k - 1) < max; k++) {
      const delay = this.delayAfter(k);
      steps.push(`WHEN ${n} ${delay < max ? '=' : '>='} ${k} THEN ?`);
      params.push(now, new Date(now.getTime() + delay * 1000));
    }
    // `next_allowed_at` and `failures` are assigned before `reset_at`, which both read (see above).
    const update = {
      sql: `UPDATE auth_throttle SET next_allowed_at = CASE WHEN ${n} <= ${free} THEN NULL ${steps.join(' ')} END, failures = ${n}, reset_at = ?
            WHERE kind = 'user' AND throttle_key = ? AND (reset_at <= ? OR next_allowed_at IS NULL OR next_allowed_at <= ?)`,
      params: [now, ...params, now, resetAt, String(userId), now, now],
    };
    const first = this.delayAfter(1);
    await this.claim('user', String(userId), update, [1, first ? new Date(now.getTime() + first * 1000) : null, resetAt], (row) => {
      const next = toDate(row.next_allowed_at);
      return toDate(row.reset_at)! > now && next && next > now ? tooMany(secondsUntil(next, now)) : null;
    });
  }

  /** Forgets a user's failures (after the right password). */
  async clearUser(userId: number): Promise<void> {
    await this.deps.db.execute("DELETE FROM auth_throttle WHERE kind = 'user' AND throttle_key = ?", [String(userId)]);
  }

  /** Deletes counters whose window is over. */
  async prune(): Promise<number> {
    const { affected } = await this.deps.db.execute('DELETE FROM auth_throttle WHERE reset_at < ?', [this.deps.clock.now()]);
    return affected;
  }

  /**
   * The conditional UPDATE counts the attempt when the counter lets it through. When it matches no
   * row, either the counter refuses (answered from the row) or there is none yet (INSERT it; a
   * concurrent INSERT wins the race and the UPDATE runs again).
   */
  private async claim(
    kind: Kind,
    key: string,
    update: { sql: string; params: unknown[] },
    fresh: [number, Date | null, Date],
    refusal: (row: Row) => ServiceError | null,
  ): Promise<void> {
    const db = this.deps.db;
    for (let attempt = 0; attempt < 4; attempt++) {
      if ((await db.execute(update.sql, update.params)).affected > 0) return;
      const [row] = await db.select<Row>('SELECT failures, next_allowed_at, reset_at FROM auth_throttle WHERE kind = ? AND throttle_key = ?', [kind, key]);
      if (row) {
        const refused = refusal(row);
        if (refused) throw refused;
        continue; // the row changed between the two statements
      }
      try {
        await db.execute('INSERT INTO auth_throttle (kind, throttle_key, failures, next_allowed_at, reset_at) VALUES (?, ?, ?, ?, ?)', [kind, key, ...fresh]);
        return;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    }
    // Only under a storm of attempts on the same counter: refuse this one rather than spin.
    throw tooMany(1);
  }
}
