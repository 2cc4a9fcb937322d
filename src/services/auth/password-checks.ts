// How many login-form password checks run at once in this process. scrypt and the SQLite driver
// share libuv's four threads (and each check holds 128 MiB): unbounded, a burst of anonymous logins
// starves every other request. The excess is answered at once instead of queued, so a flood costs
// the daemon nothing but the refusals.
import { ServiceError } from '../../errors.js';

export interface PasswordCheckLimits {
  /** In total: fewer than libuv's four threads, so the database always has one. */
  max_concurrent: number;
  /** Per client address (IPv4 address or IPv6 /64). */
  per_address: number;
}

/** Slots for password checks, per process. */
export class PasswordCheckGate {
  private readonly limits: PasswordCheckLimits;
  private running = 0;
  /** Only addresses with a check in flight: at most `max_concurrent` entries. */
  private readonly byAddress = new Map<string, number>();

  constructor(limits: PasswordCheckLimits) {
    this.limits = limits;
  }

  /** Checks running now (for tests and diagnostics). */
  get inFlight(): number {
    return this.running;
  }

  /**
   * Takes a slot for a check from `address` (an `addressKey`), or refuses at once with 429
   * `svc_login_busy` and `Retry-After: 1`. Returns the release function (safe to call twice).
   */
  enter(address: string): () => void {
    const mine = this.byAddress.get(address) ?? 0;
    if (this.running >= this.limits.max_concurrent || mine >= this.limits.per_address) {
      throw new ServiceError(
        'svc_login_busy',
        'Too many logins are being checked right now. Try again in a second.',
        429,
        { retry_after: 1 },
        { 'Retry-After': '1' },
      );
    }
    this.running++;
    this.byAddress.set(address, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
  }
}
