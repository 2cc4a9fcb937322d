// At most N requests at once to one host: a bulk run fetches many shops at once, but many logos
// live on one network CDN, and no host should see more than a browser would send it.

/** Runs work for a host once fewer than `perHost` runs for that host are under way (first come, first served). */
export class HostLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(readonly perHost: number) {}

  async run<T>(host: string, work: () => Promise<T>): Promise<T> {
    const key = host.toLowerCase();
    if ((this.active.get(key) ?? 0) >= this.perHost) {
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(key) ?? [];
        queue.push(resolve);
        this.waiting.set(key, queue);
      });
    } else {
      this.active.set(key, (this.active.get(key) ?? 0) + 1);
    }
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, so the count never dips below the limit while some wait.
      const next = this.waiting.get(key)?.shift();
      if (next) next();
      else {
        const n = (this.active.get(key) ?? 1) - 1;
        if (n > 0) this.active.set(key, n);
        else this.active.delete(key);
      }
      if (this.waiting.get(key)?.length === 0) this.waiting.delete(key);
    }
  }
}
