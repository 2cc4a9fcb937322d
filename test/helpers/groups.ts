import type { GroupCommit } from '../../src/db/group-commit.js';

/** Waits until `groups` has `n` units waiting for a group. */
export async function waitingUnits(groups: GroupCommit, n: number): Promise<void> {
  for (let i = 0; groups.waiting < n; i++) {
    if (i > 2_500) throw new Error(`only ${groups.waiting} of ${n} units are waiting for a group`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * Makes the calls while every slot of `groups` is held, one at a time: each once the one before has
 * joined the queue or settled (refused before it reached a group). So they queue in the order given,
 * whatever each reads before it reaches its group (on MariaDB, on different connections of the
 * pool, which may answer in either order). Then lets go: they run as one group. Answers each call's outcome.
 */
export async function inOneGroup<T>(groups: GroupCommit, calls: (() => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
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
    const answers: Promise<PromiseSettledResult<T>>[] = [];
    for (const call of calls) {
      const queued = groups.waiting;
      let settled = false;
      const answer = Promise.allSettled([call()]).then(([outcome]) => ((settled = true), outcome));
      answers.push(answer);
      for (let i = 0; groups.waiting === queued && !settled; i++) {
        if (i > 2_500) throw new Error(`call ${answers.length} of ${calls.length} neither joined a group nor was answered`);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    open();
    await Promise.all(holders);
    return Promise.all(answers);
  } finally {
    open();
  }
}
