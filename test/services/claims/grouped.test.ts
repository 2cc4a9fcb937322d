// Claims commit in groups of writes (src/db/group-commit.ts) like the money writes: a forced group
// answers every call exactly as the same calls made one after the other.
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';
import { inOneGroup } from '../../helpers/groups.js';
import { addAdvertiser } from '../../helpers/networks.js';

const DAY = 86_400_000;

/** What a caller sees of a claim write, without the ids and times that differ between two runs. */
function seen(outcome: PromiseSettledResult<unknown>, ids: Map<number, string>): unknown {
  if (outcome.status === 'rejected') {
    const err = outcome.reason as { code?: string; status?: number; message?: string };
    return { refused: err.code ?? err.message, status: err.status };
  }
  const v = outcome.value as { id: number; status: string; reason: string | null; note: string | null; duplicate?: boolean };
  if (!ids.has(v.id)) ids.set(v.id, `claim ${ids.size + 1}`);
  // A new claim's reason is written by its matching, after the answer of a duplicate in its group may be read.
  return { claim: ids.get(v.id), status: v.status, reason: v.status === 'declined' ? v.reason : undefined, note: v.note, duplicate: v.duplicate };
}

describeEachDialect('claims in groups', (use) => {
  let seq = 0;
  beforeAll(async () => {
    await addAdvertiser(use().ctx, 'admitad', '7100');
  });

  it('answers claims and their changes in one group exactly as the same calls one after the other', async () => {
    const { claims, users, db } = use().ctx;
    const purchased_at = new Date(Date.now() - 3 * DAY);
    const member = async () => (await users.create({ login: `grouped-claimant${++seq}`, email: `grouped-claimant${seq}@example.com` })).id;
    const claim = (member_id: number, order_ref: string) =>
      claims.create({ member_id, network: 'admitad', advertiser: '7100', order_ref, purchased_at, amount: '40.00' }, 'test');
    /** Two rounds of calls on fresh members: the claims, then changes to them. */
    const calls = async () => {
      const [a, b] = [await member(), await member()];
      const ref = `R-${++seq}`;
      const kept = (await claim(a, `${ref}-kept`)).id;
      const other = (await claim(b, `${ref}-other`)).id;
      return {
        creates: [
          () => claim(a, ref),
          // The same member, shop and reference again, in the same group: the first claim answers.
          () => claim(a, ref),
          () => claim(b, ref),
        ],
        changes: [
          () => claims.update(kept, { status: 'declined', reason: 'no purchase on record' }, 'test'),
          // Declined just before, in the same group: nothing to change, the claim as it is.
          () => claims.update(kept, { status: 'declined', reason: 'no purchase on record' }, 'test'),
          // An answer is the claim as read after its group: changes of one group go to different claims (but the conflict above).
          () => claims.update(other, { note: 'member told' }, 'test'),
          () => claims.update(999_999, { status: 'declined', reason: 'unknown' }, 'test'),
        ],
      };
    };

    const alone: unknown[] = [];
    const aloneIds = new Map<number, string>();
    const first = await calls();
    for (const call of [...first.creates, ...first.changes]) alone.push(seen((await Promise.allSettled([call()]))[0], aloneIds));

    const second = await calls();
    const before = { ...db.groups.stats };
    const ids = new Map<number, string>();
    const together = [
      ...(await inOneGroup(db.groups, second.creates as (() => Promise<unknown>)[])),
      ...(await inOneGroup(db.groups, second.changes as (() => Promise<unknown>)[])),
    ].map((o) => seen(o, ids));

    expect(together).toEqual(alone);
    expect(together).toEqual([
      { claim: 'claim 1', status: 'open', reason: undefined, note: null, duplicate: false },
      { claim: 'claim 1', status: 'open', reason: undefined, note: null, duplicate: true },
      { claim: 'claim 2', status: 'open', reason: undefined, note: null, duplicate: false },
      { claim: 'claim 3', status: 'declined', reason: 'no purchase on record', note: null, duplicate: undefined },
      { claim: 'claim 3', status: 'declined', reason: 'no purchase on record', note: null, duplicate: undefined },
      { claim: 'claim 4', status: 'open', reason: undefined, note: 'member told', duplicate: undefined },
      { refused: 'svc_claim_not_found', status: 404 },
    ]);
    expect(db.groups.stats.failed).toBe(before.failed);
    expect(db.groups.stats.grouped - before.grouped).toBeGreaterThanOrEqual(second.creates.length + second.changes.length);
  });
});
