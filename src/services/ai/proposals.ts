// The `ai_proposals` table: what a dry run proposed, kept for a day so that "keep it" saves exactly
// the text the user read, without asking (and paying) the provider again. A proposal is bound to
// its target (kind and id) and to a fingerprint of the target's text when it was made: keeping it
// after a colleague changed that text is refused rather than writing over their edit unseen. A
// kept proposal remembers its answer, so a repeated keep (a double click, a retry) answers the same
// and writes nothing. Expired rows are deleted whenever a new proposal is stored. Written only by
// AiService.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { AiKind } from './calls.js';

/** How long a dry run's proposal can be kept. */
export const PROPOSAL_TTL_MS = 24 * 3600 * 1000;

/** A proposal id as the routes take it: 32 hex characters. */
export const PROPOSAL_ID = /^[0-9a-f]{32}$/;

export interface StoredProposal<T = unknown> {
  id: string;
  kind: AiKind;
  item_id: number;
  output: T;
  generation: Record<string, unknown>;
  base: string;
  call_id: number | null;
  created_at: Date;
  expires_at: Date;
  kept_at: Date | null;
  answer: unknown;
}

/** The fingerprint of the text a proposal would replace (stable across both dialects). */
export function fingerprint(values: (string | null | undefined)[]): string {
  return createHash('sha256')
    .update(JSON.stringify(values.map((v) => v ?? null)))
    .digest('hex');
}

const label = (kind: AiKind) => (kind === 'shop' ? 'shop' : 'coupon');

function shape(r: Record<string, unknown>): StoredProposal {
  return {
    id: String(r.id),
    kind: String(r.kind) as AiKind,
    item_id: toInt(r.item_id),
    output: JSON.parse(String(r.output)),
    generation: JSON.parse(String(r.generation)) as Record<string, unknown>,
    base: String(r.base),
    call_id: r.call_id === null || r.call_id === undefined ? null : toInt(r.call_id),
    created_at: toDate(r.created_at)!,
    expires_at: toDate(r.expires_at)!,
    kept_at: toDate(r.kept_at),
    answer: r.answer === null || r.answer === undefined ? null : JSON.parse(String(r.answer)),
  };
}

export class AiProposals {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /** Stores a dry run's proposal (deleting the expired ones first); answers its id and expiry. */
  async store(
    p: { kind: AiKind; item_id: number; output: unknown; generation: unknown; base: string; call_id: number | null; actor: string },
    t?: Transaction,
  ): Promise<{ id: string; expires_at: string }> {
    const now = this.deps.clock.now();
    const expires = new Date(now.getTime() + PROPOSAL_TTL_MS);
    const id = randomBytes(16).toString('hex');
    await this.deps.db.execute('DELETE FROM ai_proposals WHERE expires_at < ?', [now], t);
    await this.deps.db.execute(
      'INSERT INTO ai_proposals (id, kind, item_id, output, generation, base, call_id, actor, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [id, p.kind, p.item_id, JSON.stringify(p.output), JSON.stringify(p.generation), p.base, p.call_id, p.actor.slice(0, 191), now, expires],
      t,
    );
    return { id, expires_at: expires.toISOString() };
  }

  /**
   * The proposal `id` for this target, locked in `t` when given: 404 svc_ai_proposal_not_found
   * (never made, or pruned), 410 svc_ai_proposal_expired, 409 svc_ai_proposal_mismatch when it
   * was made for another target.
   */
  async find(id: string, kind: AiKind, itemId: number, t?: Transaction): Promise<StoredProposal> {
    const { db, clock } = this.deps;
    const [row] = PROPOSAL_ID.test(id)
      ? await db.select<Record<string, unknown>>(`SELECT * FROM ai_proposals WHERE id = ?${t ? db.forUpdate() : ''}`, [id], t)
      : [];
    if (!row)
      throw new ServiceError(
        'svc_ai_proposal_not_found',
        `There is no AI proposal ${id.slice(0, 40)}: it was never made or has been deleted. Ask for a new one.`,
        404,
        { proposal: id.slice(0, 40) },
      );
    const p = shape(row);
    if (p.expires_at.getTime() <= clock.now().getTime())
      throw new ServiceError(
        'svc_ai_proposal_expired',
        `The AI proposal ${id} expired at ${p.expires_at.toISOString()}: proposals can be kept for ${PROPOSAL_TTL_MS / 3600_000} hours. Ask for a new one.`,
        410,
        { proposal: id, expired_at: p.expires_at.toISOString() },
      );
    if (p.kind !== kind || p.item_id !== itemId)
      throw new ServiceError(
        'svc_ai_proposal_mismatch',
        `The AI proposal ${id} was made for ${label(p.kind)} ${p.item_id}, not for ${label(kind)} ${itemId}.`,
        409,
        { proposal: id, kind: p.kind, id: p.item_id },
      );
    return p;
  }

  /** Marks the proposal kept, with the answer a repeated keep gives. */
  async markKept(id: string, actor: string, answer: unknown, t: Transaction): Promise<void> {
    await this.deps.db.execute(
      'UPDATE ai_proposals SET kept_at = ?, kept_by = ?, answer = ? WHERE id = ? AND kept_at IS NULL',
      [this.deps.clock.now(), actor.slice(0, 191), JSON.stringify(answer), id],
      t,
    );
  }
}

/** 409 svc_ai_proposal_stale: the target's text changed since the proposal was made. */
export function staleProposal(kind: AiKind, itemId: number, proposal: string): ServiceError {
  return new ServiceError(
    'svc_ai_proposal_stale',
    `The ${label(kind)}'s text was changed after this AI proposal was made, so keeping it would overwrite that change unseen. Look at the ${label(kind)} again and ask for a new proposal.`,
    409,
    { proposal, kind, id: itemId },
  );
}
