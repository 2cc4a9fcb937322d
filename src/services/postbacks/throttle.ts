// Flood control for refused postbacks. Refusals are counted per network and client in a fixed
// window (`postbacks.rejections`), in the database: every daemon counts the same, and nothing a
// client sends can evict a count. A client is an IPv4 address, or the /64 of an IPv6 one (one
// host commonly holds a whole /64). Once a client has had `max_per_address` refusals before
// authenticating, its postbacks to that network are answered 429 at once, before any parsing or
// signature work, until its window ends: no record, no log row. Only unauthenticated refusals
// count toward that limit: a sender holding the network's secret is the network itself (its
// refusals are data problems, kept bounded by aggregation), and accepted postbacks never reach
// this code, so a network's real traffic is never throttled by someone else's flood.
//
// Which clients it throttles is also kept in this process, so a throttled postback costs a map
// lookup and no database work. That memory is bounded: a client it forgot is found again by its
// next refusal, whose count in the database is already over the limit, and which is not stored.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { LogService } from '../logs/index.js';

export interface RejectionLimits {
  window_seconds: number;
  max_per_address: number;
  aggregate_after: number;
}

/** Refusals of one client to one network in its current window, this one included. */
export interface Tally {
  refusals: number;
  unauthenticated: number;
  windowStart: Date;
}

interface Block {
  network: string;
  client: string;
  until: number;
  /** Postbacks answered 429 by this process, for the summary line. */
  throttled: number;
  timer: NodeJS.Timeout;
}

/** Clients this process remembers throttling, at most. */
const MAX_BLOCKS = 10_000;

/** The client a refusal is counted on: the IPv4 address, the /64 of an IPv6 one, or `unknown`. */
export function clientKey(ip: string | null): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1] : ip.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return 'unknown';
  // Expand `::` so the first four groups are the /64 whatever the notation.
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The aggregated record of one kind of refusal from one client in one window. */
export function aggregateKey(network: string, ip: string | null, kind: string, windowStart: Date): string {
  return createHash('sha256')
    .update(`${network}\0${clientKey(ip)}\0${kind}\0${windowStart.getTime()}`)
    .digest('hex');
}

/** Counts refusals, throttles flooding clients, and says so in the log once per window. */
export class PostbackThrottle {
  private readonly blocks = new Map<string, Block>();

  constructor(private readonly deps: { db: Database; clock: Clock; logger: LogService; limits: RejectionLimits }) {}

  /** The 429 to answer at once when this process throttles the client on `network`; null otherwise. */
  check(network: string, ip: string | null): ServiceError | null {
    if (this.blocks.size === 0) return null;
    const key = `${network}\0${clientKey(ip)}`;
    const block = this.blocks.get(key);
    if (!block) return null;
    const left = block.until - this.deps.clock.now().getTime();
    if (left <= 0) {
      this.end(key);
      return null;
    }
    block.throttled++;
    return throttled(left);
  }

  /** Counts one refusal of the client on `network` in `t` (a new window once the last one is over); the tally after it. */
  async count(network: string, ip: string | null, authenticated: boolean, t: Transaction): Promise<Tally> {
    const { db, clock, limits } = this.deps;
    const client = clientKey(ip);
    const now = clock.now();
    const expired = new Date(now.getTime() - limits.window_seconds * 1000);
    const unauthenticated = authenticated ? 0 : 1;
    const incoming = (c: string) => db.incoming(c);
    // The counts are assigned before window_start: MariaDB assigns left to right, so each reads
    // the old window either way.
    const sql = db.upsert('postback_rejections', ['network', 'client', 'window_start', 'refusals', 'unauthenticated', 'updated_at'], ['network', 'client'], {
      refusals: 'CASE WHEN window_start <= ? THEN 1 ELSE refusals + 1 END',
      unauthenticated: `CASE WHEN window_start <= ? THEN ${incoming('unauthenticated')} ELSE unauthenticated + ${incoming('unauthenticated')} END`,
      window_start: `CASE WHEN window_start <= ? THEN ${incoming('window_start')} ELSE window_start END`,
      updated_at: incoming('updated_at'),
    });
    await db.execute(sql, [network, client, now, 1, unauthenticated, now, expired, expired, expired], t);
    const [row] = await db.select<Record<string, unknown>>(
      'SELECT refusals, unauthenticated, window_start FROM postback_rejections WHERE network = ? AND client = ?',
      [network, client],
      t,
    );
    return { refusals: toInt(row.refusals), unauthenticated: toInt(row.unauthenticated), windowStart: toDate(row.window_start) ?? now };
  }

  /** Whether a refusal with this tally is past the limit: answered 429, nothing stored. */
  over(tally: Tally, authenticated: boolean): boolean {
    return !authenticated && tally.unauthenticated > this.deps.limits.max_per_address;
  }

  /**
   * After a refusal's transaction: throttles the client from the refusal that reached the limit
   * on (logging that once, from the one process whose refusal reached it), and answers the 429
   * for a refusal past it (null otherwise).
   */
  settle(network: string, ip: string | null, tally: Tally, authenticated: boolean): ServiceError | null {
    const { limits, clock, logger } = this.deps;
    if (authenticated || tally.unauthenticated < limits.max_per_address) return null;
    const until = tally.windowStart.getTime() + limits.window_seconds * 1000;
    const left = Math.max(1, until - clock.now().getTime());
    const client = clientKey(ip);
    const key = `${network}\0${client}`;
    let block = this.blocks.get(key);
    if (!block) {
      if (this.blocks.size >= MAX_BLOCKS) this.end(this.blocks.keys().next().value!);
      const timer = setTimeout(() => this.end(key), left);
      timer.unref();
      block = { network, client, until, throttled: 0, timer };
      this.blocks.set(key, block);
    }
    if (tally.unauthenticated === limits.max_per_address) {
      logger.warning('postbacks', 'Postbacks throttled: too many refused postbacks from one address', {
        network,
        client,
        refused: tally.unauthenticated,
        window_seconds: limits.window_seconds,
        until: new Date(until).toISOString(),
      });
      return null;
    }
    block.throttled++;
    return throttled(left);
  }

  /** Ends every throttle this process keeps (it is stopping), logging their summaries. */
  close(): void {
    for (const key of [...this.blocks.keys()]) this.end(key);
  }

  /** Deletes the counts of windows that are over; returns how many. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - this.deps.limits.window_seconds * 1000);
    const { affected } = await this.deps.db.execute('DELETE FROM postback_rejections WHERE window_start <= ?', [cutoff]);
    return affected;
  }

  /** Forgets a throttle; the summary line says how many postbacks it answered 429. */
  private end(key: string): void {
    const block = this.blocks.get(key);
    if (!block) return;
    this.blocks.delete(key);
    clearTimeout(block.timer);
    if (block.throttled > 0) {
      this.deps.logger.warning('postbacks', `${block.throttled} postback(s) throttled`, {
        network: block.network,
        client: block.client,
        throttled: block.throttled,
        window_seconds: this.deps.limits.window_seconds,
      });
    }
  }
}

function throttled(leftMs: number): ServiceError {
  const seconds = Math.max(1, Math.ceil(leftMs / 1000));
  return new ServiceError(
    'svc_postback_throttled',
    `Too many refused postbacks from this address: retry in ${seconds} s.`,
    429,
    { retry_after: seconds },
    { 'Retry-After': String(seconds) },
  );
}
