// Holds an idempotent request inside its transaction, right after it claimed its key (the
// `holdInTransaction` test hook of the context), until the test lets it go.
import type { HoldInTransaction } from '../../src/services/idempotency/index.js';

export class TransactionHold {
  private armed: { scope: string; entered: () => void; released: Promise<void> } | null = null;

  /** Pass as the context option `holdInTransaction`. */
  readonly hook: HoldInTransaction = async (scope) => {
    const armed = this.armed;
    if (!armed || armed.scope !== scope) return;
    this.armed = null;
    armed.entered();
    await armed.released;
  };

  /** Holds the next request on `scope`: `entered` resolves once it is held; `release` lets it commit. */
  arm(scope: string): { entered: Promise<void>; release: () => void } {
    let entered!: () => void;
    let release!: () => void;
    const enteredP = new Promise<void>((r) => (entered = r));
    const released = new Promise<void>((r) => (release = r));
    this.armed = { scope, entered, released };
    return { entered: enteredP, release };
  }
}
