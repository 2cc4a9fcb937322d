// Client-side throttling per network account: a quota that holds the network's documented limit
// (Awin 20 calls a minute, impact.com 1,000 or 500 an hour) so a long sync paces itself instead
// of learning the limit from 429s. Quotas live in the module instance, so one process shares
// them across jobs; several daemons each keep their own and rely on 429 handling.
import { NetworkError } from './network-error.js';

export interface RateLimit {
  /** Calls allowed per `perMs`; also the burst size. */
  limit: number;
  perMs: number;
}

export const PER_MINUTE = 60_000;
export const PER_HOUR = 3_600_000;

/** Sleeps `ms`, waking early with NetworkError `svc_network_aborted` when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined, network: string): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(network));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(network));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function aborted(network: string): NetworkError {
  return new NetworkError('svc_network_aborted', `The ${network} request was cancelled.`, { network });
}

/**
 * A call quota of `limit` calls per `perMs`, kept as a sliding log of call times. Not a plain
 * token bucket: a bucket whose burst equals the quota can spend nearly twice the quota inside one
 * of the network's fixed windows (a full burst, then the refill), which is exactly what the
 * networks count. A sliding log never has more than `limit` calls in any span of `perMs`.
 */
export class CallQuota {
  private readonly log: number[] = [];
  private blockedUntil = 0;

  constructor(
    readonly rate: RateLimit,
    private readonly clock: () => number = () => performance.now(),
  ) {
    if (!(rate.limit >= 1) || !(rate.perMs > 0)) throw new RangeError('a rate limit needs a positive limit and period');
  }

  /** Waits until a call may be made, then records it. */
  async take(signal: AbortSignal | undefined, network: string): Promise<void> {
    for (;;) {
      const now = this.clock();
      this.expire(now);
      const wait = Math.max(this.blockedUntil - now, this.log.length >= this.rate.limit ? this.log[0] + this.rate.perMs - now : 0);
      if (wait <= 0) {
        this.log.push(now);
        return;
      }
      await sleep(Math.ceil(wait), signal, network);
    }
  }

  /**
   * The network said how many calls are left (impact's `X-RateLimit-Remaining-hour`) and,
   * if it did, in how long its window resets: the log is padded so no more than that are made.
   */
  observeRemaining(remaining: number, resetMs: number | null = null): void {
    if (!Number.isFinite(remaining) || remaining < 0) return;
    const now = this.clock();
    this.expire(now);
    const missing = this.rate.limit - Math.floor(remaining) - this.log.length;
    if (missing <= 0) return;
    const at = resetMs != null && resetMs >= 0 ? Math.min(now, now + resetMs - this.rate.perMs) : now;
    const padding = new Array<number>(missing).fill(at);
    this.log.unshift(...padding);
    this.log.sort((a, b) => a - b);
  }

  /** After a 429, make no call until `ms` has passed. */
  pause(ms: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, this.clock() + ms);
  }

  /** Calls that could be made right now. */
  available(): number {
    const now = this.clock();
    this.expire(now);
    return now < this.blockedUntil ? 0 : this.rate.limit - this.log.length;
  }

  private expire(now: number): void {
    let drop = 0;
    while (drop < this.log.length && this.log[drop] <= now - this.rate.perMs) drop++;
    if (drop) this.log.splice(0, drop);
  }
}

/** Quotas by endpoint group and account, created on first use. */
export class RateLimiters {
  private readonly buckets = new Map<string, CallQuota>();

  /** `limits` maps a group name to its quota; a group set to null is not throttled. */
  constructor(private readonly limits: Record<string, RateLimit | null>) {}

  bucket(group: string, account: string): CallQuota | null {
    const rate = this.limits[group] ?? null;
    if (!rate) return null;
    const key = `${group}\u0000${account}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new CallQuota(rate);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }
}
