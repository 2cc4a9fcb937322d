// The body of the guard's last hop (src/outbound/guard.ts): read whole (`fetch`) or as a stream
// (`stream`), the size cap enforced while reading, and the whole-request time budget that the
// reader's own pauses do not spend.
import type http from 'node:http';
import { Readable } from 'node:stream';
import { dict } from '../objects.js';

/** Why a hop ended early, decided by timers and the caller's signal (the socket error is secondary). */
export type Stop = { kind: 'timeout'; ms: number; what: string } | { kind: 'caller' } | { kind: 'too_large' } | null;

/**
 * The whole-request time budget. It runs while the guard waits on the server: for `fetch`, from the
 * first connection to the body's last byte; for `stream`, until the headers and then only while
 * the reader is asking for more, so a reader that is slow to take the data (writing what it read
 * to the database) spends none of it. Out of time, it calls `onOut` once.
 */
export class WaitBudget {
  private left: number;
  private since: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private over = false;

  constructor(
    ms: number,
    private readonly onOut: () => void,
  ) {
    this.left = ms;
  }

  run(): void {
    if (this.since !== null || this.over) return;
    this.since = performance.now();
    this.timer = setTimeout(
      () => {
        this.over = true;
        this.onOut();
      },
      Math.max(0, this.left),
    );
  }

  pause(): void {
    if (this.since === null) return;
    clearTimeout(this.timer);
    this.left -= performance.now() - this.since;
    this.since = null;
  }

  stop(): void {
    this.pause();
    this.over = true;
  }
}

/** What a hop gives its body: its limits, and how to stop, report and let go of the request. */
export interface BodyControl {
  maxBytes: number;
  /** `overflow: 'truncate'`: past the cap, answer what was read instead of refusing. */
  truncate: boolean;
  budget?: WaitBudget;
  /** Whether the hop was stopped already (timeout, the caller's abort, the cap). */
  stopped(): boolean;
  /** Stops the hop for being over the cap (the socket is closed before the rest arrives). */
  halt(): void;
  /** The error to answer for a failure, decided by why the hop stopped (see guard.ts). */
  fail(err: unknown): unknown;
  /** Clears the hop's timers and listeners and closes its agent. */
  release(): void;
}

/** A response whose headers are in: its status, headers and redirect target, and its body, unread. */
export class ResponseBody {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Record<string, string>;
  readonly location: string | null;
  /** Set by `read` when it cut the body off (`overflow: 'truncate'`). */
  truncated = false;

  constructor(
    private readonly res: http.IncomingMessage,
    private readonly o: BodyControl,
  ) {
    this.status = res.statusCode ?? 0;
    this.headers = dict<string>();
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) this.headers[name] = Array.isArray(value) ? value.join(', ') : value;
    this.location = typeof res.headers.location === 'string' ? res.headers.location : null;
    res.on('error', () => undefined);
  }

  /** Drops the response unread. */
  discard(): void {
    this.o.release();
    this.res.destroy();
  }

  private declaredTooLarge(): boolean {
    return Number(this.res.headers['content-length'] ?? NaN) > this.o.maxBytes;
  }

  /** The connection closing before the body's end: why the hop stopped, or a reset. */
  private closedEarly(): Error {
    return this.o.stopped() ? new Error('stopped') : Object.assign(new Error('The connection closed early.'), { code: 'ECONNRESET' });
  }

  /** Reads the body (bounded); only called once. */
  read(): Promise<Buffer> {
    const { res, o } = this;
    return new Promise<Buffer>((resolveBody, rejectBody) => {
      let finished = false;
      const finish = (err: unknown, value?: Buffer) => {
        if (finished) return;
        finished = true;
        o.release();
        if (err) rejectBody(o.fail(err));
        else resolveBody(value!);
      };
      if (o.stopped()) return finish(new Error('stopped'));
      if (this.declaredTooLarge() && !o.truncate) {
        o.halt();
        res.destroy();
        return finish(new Error('too large'));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (finished) return;
        size += chunk.length;
        if (size > o.maxBytes && o.truncate) {
          // Enough read: keep up to the cap, close the socket, answer what came.
          chunks.push(chunk.subarray(0, chunk.length - (size - o.maxBytes)));
          this.truncated = true;
          finish(null, Buffer.concat(chunks));
          res.destroy();
          return;
        }
        if (size > o.maxBytes) {
          // Stop reading now: the socket is closed before the rest arrives.
          o.halt();
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => finish(null, Buffer.concat(chunks)));
      res.on('close', () => {
        if (!res.complete) finish(this.closedEarly());
      });
    });
  }

  /**
   * The body as a stream, bounded like `read` (never truncated); a refusal destroys it with the
   * hop's error. The socket is read only while the reader asks for more; destroying the stream
   * closes the connection. Only called once.
   */
  stream(): Readable {
    const { res, o } = this;
    let finished = false;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      o.budget?.stop();
      o.release();
      if (err) out.destroy(o.fail(err) as Error);
    };
    let size = 0;
    const out = new Readable({
      // The reader wants more: the server's time counts again until it is given some.
      read: () => {
        if (finished) return;
        o.budget?.run();
        res.resume();
      },
      destroy: (err, callback) => {
        // The reader stopped early (or a refusal below): close the connection.
        if (!finished) {
          finished = true;
          o.budget?.stop();
          o.release();
          res.destroy();
        }
        callback(err);
      },
    });
    res.pause();
    if (o.stopped()) process.nextTick(() => finish(new Error('stopped')));
    else if (this.declaredTooLarge()) {
      o.halt();
      res.destroy();
      process.nextTick(() => finish(new Error('too large')));
    }
    res.on('data', (chunk: Buffer) => {
      if (finished) return;
      size += chunk.length;
      if (size > o.maxBytes) {
        o.halt();
        res.destroy();
        return;
      }
      if (!out.push(chunk)) {
        // The reader has enough for now: stop reading the socket, and the clock.
        res.pause();
        o.budget?.pause();
      }
    });
    res.on('end', () => {
      if (finished) return;
      finished = true;
      o.budget?.stop();
      o.release();
      out.push(null);
    });
    res.on('close', () => {
      if (!res.complete) finish(this.closedEarly());
    });
    return out;
  }
}
