// Group commit (postbacks, clicks, and through GroupCommit the money writes): work that arrives while earlier work is being written waits and is written with
// the next batch, so the database sees one transaction for many requests under load, and a lone
// request is written at once (no timer, no added latency when idle).

/** Hands submitted items to `run` in batches of at most `maxBatch`, `inFlight` batches at a time. */
export class BatchQueue<T> {
  private queued: T[] = [];
  private running = 0;

  constructor(
    private readonly run: (items: T[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly inFlight: number,
  ) {}

  /** Items submitted and not yet handed to `run`. */
  get waiting(): number {
    return this.queued.length;
  }

  /** Queues one item; `run` settles it (it must never throw: each item carries its own outcome). */
  submit(item: T): void {
    this.queued.push(item);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.inFlight && this.queued.length > 0) {
      const items = this.queued.splice(0, this.maxBatch);
      this.running++;
      void this.run(items)
        .catch(() => {})
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}
