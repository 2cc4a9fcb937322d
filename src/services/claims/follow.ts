// Following filed claims: the `claims.poll` job reads each network's answers (an approved claim is
// tied to the order the network then reports, a declined one records the network's reason, an
// incomplete one goes back to support), files again the claims whose filing failed, warns of
// claims nearing their deadline (`cashtrack.claim.deadline_near`, once) and expires the live ones
// past it.
import { isServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import type { ClaimAnswer } from '../../networks/types.js';
import type { ClaimFiling } from './filing.js';
import { FILING_FAILED } from './filing.js';
import type { ClaimService, ClaimServiceDeps } from './index.js';
import { findMatch } from './matching.js';
import type { ClaimRow } from './store.js';

const DAY = 86_400_000;

export interface PollCounts {
  /** Live claims without an order that an order on file now answers (see `rematch`). */
  matched: number;
  checked: number;
  approved: number;
  declined: number;
  reopened: number;
  filed: number;
  warned: number;
  expired: number;
  failed: number;
}

export class ClaimFollow {
  constructor(
    private readonly deps: ClaimServiceDeps,
    private readonly claims: ClaimService,
    private readonly filing: ClaimFiling,
  ) {}

  async poll(actor: string): Promise<PollCounts> {
    const counts: PollCounts = { matched: 0, checked: 0, approved: 0, declined: 0, reopened: 0, filed: 0, warned: 0, expired: 0, failed: 0 };
    const { store } = this.claims;
    counts.matched = await this.rematch(actor);
    // Filings that failed: once more.
    for (const row of await store.inStatus(['open'], { channel: 'api' })) {
      if (row.network_status !== FILING_FAILED) continue;
      await this.filing.file(row, actor);
      if ((await store.row(row.id))?.status === 'submitted') counts.filed++;
    }
    // The networks' answers, one network at a time.
    const submitted = await store.inStatus(['submitted']);
    const byNetwork = new Map<string, ClaimRow[]>();
    for (const row of submitted) byNetwork.set(row.network, [...(byNetwork.get(row.network) ?? []), row]);
    for (const [network, rows] of byNetwork) {
      try {
        const { module, runtime } = await this.deps.networks.runtime(network);
        if (!module.claims) continue;
        const answers = await module.claims.answers(
          runtime,
          rows.map((r) => ({
            reference: String(r.id),
            network_ref: r.network_ref,
            advertiser_id: r.advertiser,
            order_ref: r.order_ref,
            purchased_at: r.purchased_at,
            submitted_at: r.submitted_at ?? r.created_at,
          })),
        );
        const byRef = new Map(answers.map((a) => [a.network_ref, a]));
        for (const row of rows) {
          const answer = answers.find((a) => a.reference === String(row.id)) ?? (row.network_ref ? byRef.get(row.network_ref) : undefined);
          counts.checked++;
          if (!answer) continue;
          const outcome = await this.apply(row, answer, module.name, actor);
          if (outcome) counts[outcome]++;
        }
      } catch (err) {
        if (!isServiceError(err)) throw err;
        counts.failed += rows.length;
        this.deps.logger.warning('claims', 'Reading claim answers failed', { network, code: err.code, error: err.message });
      }
    }
    await this.deadlines(actor, counts);
    return counts;
  }

  /**
   * A claim is matched to an arriving order by the `cashtrack.order.recorded` listener; if that
   * run failed (the database was away, the daemon stopped), nothing else would look again until
   * the network answered. So each poll runs the matching rule once more for the live claims that
   * have no order and links those an order of ours now answers. Cases left to support
   * (another member's order, several candidates) keep the reason the first run wrote.
   */
  private async rematch(actor: string): Promise<number> {
    let matched = 0;
    for (const row of await this.claims.store.inStatus(['open', 'submitted'], { withoutOrder: true })) {
      const m = await findMatch(row, this.deps.orderMatches, this.deps.settings);
      if (m.kind !== 'own' && m.kind !== 'unmatched') continue;
      await this.claims.link(row, m.order, m.by, actor);
      matched++;
    }
    return matched;
  }

  /** Acts on one answer of the network; answers what the claim became. */
  private async apply(row: ClaimRow, answer: ClaimAnswer, name: string, actor: string): Promise<'approved' | 'declined' | 'reopened' | null> {
    const now = this.deps.clock.now();
    const seen = {
      network_ref: answer.network_ref,
      network_status: answer.network_status,
      checked_at: now,
      ...(answer.deadline ? { deadline_at: answer.deadline } : {}),
    };
    if (answer.status === 'submitted') {
      await this.claims.move(row.id, { set: seen }, actor);
      return null;
    }
    if (answer.status === 'declined') {
      await this.claims.move(row.id, { to: 'declined', set: { ...seen, reason: answer.reason ?? `Declined by ${name}.` } }, actor);
      return 'declined';
    }
    if (answer.status === 'incomplete') {
      await this.claims.move(row.id, { to: 'open', set: { ...seen, reason: `${name} asks for more: ${answer.reason ?? 'see the network'}.` } }, actor);
      return 'reopened';
    }
    await this.claims.move(row.id, { to: 'approved', set: { ...seen, reason: `Approved by ${name}.` } }, actor);
    // The order the network reports for it: by its transaction id, else by the matching rule.
    const approved = (await this.claims.store.row(row.id))!;
    const order = answer.transaction_id ? await this.deps.orderMatches.byTransaction(row.network, answer.transaction_id) : null;
    if (order && (order.member_id === null || order.member_id === row.member_id)) await this.claims.link(approved, order, 'network', actor);
    else if (order)
      await this.claims.move(
        row.id,
        { set: { reason: `Approved by ${name}; its order ${order.id} belongs to member ${order.member_id}: support decides.` } },
        actor,
      );
    else {
      const m = await findMatch(approved, this.deps.orderMatches, this.deps.settings);
      if (m.kind === 'own' || m.kind === 'unmatched') await this.claims.link(approved, m.order, m.by, actor);
      else await this.claims.move(row.id, { set: { reason: `Approved by ${name}; its order is linked when the network reports it.` } }, actor);
    }
    return 'approved';
  }

  /** Warns once of live claims within `claims.warn_days` of their deadline; expires those past it. */
  private async deadlines(actor: string, counts: PollCounts): Promise<void> {
    const now = this.deps.clock.now();
    const { store } = this.claims;
    for (const row of await store.dueBefore(now)) {
      await this.claims.move(row.id, { to: 'expired', set: { reason: `No answer by the deadline (${row.deadline_at!.toISOString().slice(0, 10)}).` } }, actor);
      counts.expired++;
    }
    for (const row of await store.dueBefore(new Date(now.getTime() + this.deps.settings.warnDays * DAY))) {
      if (row.warned_at !== null) continue;
      await this.deps.db.transaction(async (t) => {
        await store.update(row.id, { warned_at: now }, t);
        const [claim] = await store.byIds([row.id], t);
        await this.deps.events.emit(t, HOOKS.claimDeadlineNear, claim, { actor });
      });
      this.deps.logger.warning('claims', 'Claim deadline near', {
        claim_id: row.id,
        network: row.network,
        status: row.status,
        deadline_at: row.deadline_at,
        actor,
      });
      counts.warned++;
    }
  }
}
