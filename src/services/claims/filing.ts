// Filing a claim with its network: through the network's claim API (Admitad's lost orders,
// impact.com's action inquiries) at once, or in the next batch file of a network that takes
// claims as a file (Awin's transaction queries, written by `claims.export`). A network without a
// channel, switched off or not configured, or a channel that needs what the claim lacks, leaves
// the claim open for support with the reason; a failed call leaves it open too, and the poll files
// it again.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isServiceError } from '../../errors.js';
import { applyRate, formatAmount, parseAmount, parsePercent } from '../../money.js';
import type { ClaimChannel, NetworkClaim, NetworkModule } from '../../networks/types.js';
import type { ClaimService, ClaimServiceDeps } from './index.js';
import type { ClaimRow } from './store.js';

const DAY = 86_400_000;
/** The network status of a claim whose filing failed (the poll files it again). */
export const FILING_FAILED = 'filing_failed';

export class ClaimFiling {
  constructor(
    private readonly deps: ClaimServiceDeps,
    private readonly claims: ClaimService,
  ) {}

  /** Files an open claim (see the header). */
  async file(row: ClaimRow, actor: string): Promise<void> {
    const { networks, logger, clock } = this.deps;
    const module = await networks.module(row.network);
    const channel = module.claims;
    const open = (reason: string, set: Record<string, unknown> = {}) => this.claims.move(row.id, { set: { reason, ...set } }, actor);
    if (!channel) return void (await open(`${module.name} has no claim channel: support files this claim with the network by hand.`));
    try {
      await networks.requireUsable(row.network);
    } catch (err) {
      if (!isServiceError(err)) throw err;
      return void (await open(`${err.message} The claim waits for support.`));
    }
    if (channel.kind === 'file') return void (await open(`Waiting for the next ${module.name} claims file (the claims.export job).`, { channel: 'file' }));
    if (channel.needsReceipt && !row.receipt)
      return void (await open(`${module.name} takes a claim only with the receipt: add the receipt image to file it.`, { channel: 'api' }));
    const { runtime } = await networks.runtime(row.network);
    try {
      const answer = await channel.submit!(runtime, await this.networkClaim(row));
      const now = clock.now();
      await this.claims.move(
        row.id,
        {
          to: 'submitted',
          set: {
            channel: 'api',
            network_ref: answer.network_ref,
            network_status: answer.network_status,
            reason: `Filed with ${module.name}.`,
            submitted_at: now,
            checked_at: now,
            deadline_at: answer.deadline ?? new Date(now.getTime() + this.claims.deadlineDays(row.network) * DAY),
          },
        },
        actor,
      );
    } catch (err) {
      if (!isServiceError(err)) throw err;
      logger.warning('claims', 'Filing a claim failed', { claim_id: row.id, network: row.network, code: err.code, error: err.message });
      await open(`Filing with ${module.name} failed (${err.message}); the claims poll tries again.`, { channel: 'api', network_status: FILING_FAILED });
    }
  }

  /** The claim as the network's channel takes it (with the receipt's bytes, the click's time and the expected commission). */
  async networkClaim(row: ClaimRow): Promise<NetworkClaim> {
    const file = row.receipt ? await this.deps.media.privateFile(row.receipt) : null;
    const click = row.click_id ? ((await this.deps.clicks.rows([row.click_id])).get(row.click_id) ?? null) : null;
    return {
      reference: String(row.id),
      advertiser_id: row.advertiser,
      order_ref: row.order_ref,
      purchased_at: row.purchased_at,
      amount: formatAmount(row.amount, row.currency),
      currency: row.currency,
      expected_commission: await this.expectedCommission(row),
      customer_ref: String(row.member_id),
      click_ref: row.click_id,
      clicked_at: click?.created_at ?? null,
      note: row.note,
      receipt: file ? { data: file.data, type: file.type, filename: `receipt-${row.id}.${file.type === 'image/jpeg' ? 'jpg' : file.type.slice(6)}` } : null,
    };
  }

  /**
   * What the site expects the network to pay for the claimed purchase: the claimed amount at the
   * advertiser's commission as the network states it now (synced into the advertiser). A percent
   * commission with a range counts at its lower end (the network's reviewer is never asked for
   * more than the programme's lowest rate); a flat one is its amount when it is in the claim's
   * currency (no currency is converted). Null when the network states no commission, a mixed one,
   * or one that cannot be read. Not from the cashback rule: that is the member's share of the
   * commission (or of the sale), and gives the commission back for no rule type but
   * `percent_commission`, and the click keeps only the rule, not the commission.
   */
  async expectedCommission(row: Pick<ClaimRow, 'network' | 'advertiser' | 'amount' | 'currency'>): Promise<string | null> {
    let commission: { type: string; min: string | null; max: string | null; currency: string | null } | null;
    try {
      commission = (await this.deps.advertisers.get(row.network, row.advertiser)).commission;
    } catch (err) {
      if (isServiceError(err)) return null;
      throw err;
    }
    const value = commission?.min ?? commission?.max ?? null;
    if (!commission || value === null) return null;
    try {
      if (commission.type === 'percent') return formatAmount(applyRate(row.amount, parsePercent(value)), row.currency);
      if (commission.type === 'flat' && commission.currency === row.currency)
        return formatAmount(parseAmount(value, row.currency, { allowZero: true }), row.currency);
    } catch (err) {
      if (!isServiceError(err)) throw err;
    }
    return null;
  }

  /**
   * Writes one upload file per network that takes claims as a file, with its claims waiting for
   * it; they become `submitted` (their reference is the one in the file). A claim is in one file.
   */
  async exportFiles(actor: string): Promise<{ files: { network: string; file: string; claims: number }[] }> {
    const { networks, clock, logger } = this.deps;
    const files: { network: string; file: string; claims: number }[] = [];
    const waiting = await this.claims.store.inStatus(['open'], { channel: 'file', unexported: true });
    const byNetwork = new Map<string, ClaimRow[]>();
    for (const row of waiting) byNetwork.set(row.network, [...(byNetwork.get(row.network) ?? []), row]);
    for (const [network, rows] of byNetwork) {
      let module: NetworkModule;
      let channel: ClaimChannel | undefined;
      try {
        module = await networks.module(network);
        channel = module.claims;
      } catch {
        continue;
      }
      if (!channel?.exportFile) continue;
      const settings = await networks.settings(network);
      const out = channel.exportFile(settings, await Promise.all(rows.map((r) => this.networkClaim(r))));
      mkdirSync(this.deps.exportDir, { recursive: true, mode: 0o700 });
      const path = join(this.deps.exportDir, out.filename);
      writeFileSync(path, out.body, { mode: 0o600 });
      const now = clock.now();
      for (const row of rows) {
        if (!out.references.includes(String(row.id))) continue;
        await this.claims.move(
          row.id,
          {
            to: 'submitted',
            set: {
              network_ref: String(row.id),
              network_status: 'exported',
              export_file: out.filename,
              reason: `In ${module.name} claims file ${out.filename}, to upload.`,
              submitted_at: now,
              deadline_at: new Date(now.getTime() + this.claims.deadlineDays(network) * DAY),
            },
          },
          actor,
        );
      }
      logger.info('claims', 'Claims file written', { network, file: path, claims: out.references.length, actor });
      files.push({ network, file: out.filename, claims: out.references.length });
    }
    return { files };
  }
}
