import type { GroupCommit } from '../../src/db/group-commit.js';

/** Waits until `groups` has `n` units waiting for a group. */
export async function waitingUnits(groups: GroupCommit, n: number): Promise<void> {
  for (let i = 0; groups.waiting < n; i++) {
    if (i > 2_500) throw new Error(`only ${groups.waiting} of ${n} units are waiting for a group`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * Starts the calls `start` makes while every slot of `groups` is held, and lets go once `units`
 * of theirs wait: they then run as one group, in the order they were queued. Answers each call's outcome.
 */
export async function inOneGroup<T>(groups: GroupCommit, units: number, start: () => Promise<T>[]): Promise<PromiseSettledResult<T>[]> {
  let open!: () => void;
  const hold = new Promise<void>((r) => (open = r));
  let holding = 0;
  const holders = Array.from({ length: groups.inFlight }, () => groups.run(() => (holding++, hold)));
  try {
    // Every slot held (a group that just ended frees its slot a moment after its answers).
    for (let i = 0; holding < groups.inFlight; i++) {
      if (i > 2_500) throw new Error('the groups in flight never ended');
      await new Promise((r) => setTimeout(r, 2));
    }
    const answers = Promise.allSettled(start());
    await waitingUnits(groups, units);
    open();
    await Promise.all(holders);
    return answers;
  } finally {
    open();
  }
}
