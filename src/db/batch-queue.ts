// Group commit (postbacks, clicks, and through GroupCommit the money writes): work that arrives while earlier work is being written waits and is written with
// the next batch, so the database sees one transaction for many requests under load, and a lone
// request is written at once (no timer, no added latency when idle).

/** Hands submitted items to `run` in batches of at most `maxBatch`, `inFlight` batches at a time. */
export class BatchQueue<T> {
  private waiting: T[] = [];
  private running = 0;

  constructor(
    private readonly run: (items: T[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly inFlight: number,
  ) {}

  /** Queues one item; `run` settles it (it must never throw: each item carries its own outcome). */
  submit(item: T): void {
    this.waiting.push(item);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.inFlight && this.waiting.length > 0) {
      const items = this.waiting.splice(0, this.maxBatch);
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
