// A member's data requests under data-protection law: the export (everything held about one
// member as one JSON document, the answer to an access request) and the erasure (the person
// anonymised, every amount and row kept so the ledger still adds up). This domain owns no table:
// every read and write goes through the owner of the table (see src/context.ts), the erasure's
// writes in one transaction that each owner joins.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Replacement } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import { ServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import type { AppPasswordService, SessionService } from '../auth/index.js';
import type { ClaimService } from '../claims/index.js';
import type { ClickService } from '../clicks/index.js';
import type { IdempotencyService } from '../idempotency/index.js';
import type { JobService } from '../jobs/index.js';
import type { Entry, LedgerService } from '../ledger/index.js';
import type { LogService } from '../logs/index.js';
import type { OrderService } from '../orders/index.js';
import { ERASURE_REASON, type PayoutBatchService, type PayoutService } from '../payouts/index.js';
import type { ReferralService } from '../referrals/index.js';
import { erasedLogin, type User, type UserService } from '../users/index.js';
import type { WebhookEvents, WebhookService } from '../webhooks/index.js';
import type { EraseInput } from './schemas.js';

export type { EraseInput } from './schemas.js';

/** What an erasure answers (a repeated one answers the same). */
export interface ErasureResult {
  member: User;
  erased_at: string;
  /** The entries that wrote off a positive balance (forced erasures only). */
  written_off: Entry[];
  /** The pending payouts cancelled first (forced erasures only). */
  payouts_cancelled: number[];
}

export interface MemberDataServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  events: WebhookEvents;
  users: UserService;
  sessions: SessionService;
  appPasswords: AppPasswordService;
  ledger: LedgerService;
  payouts: PayoutService;
  payoutBatches: Pick<PayoutBatchService, 'eraseWords'>;
  orders: OrderService;
  referrals: ReferralService;
  clicks: ClickService;
  claims: ClaimService;
  idempotency: IdempotencyService;
  webhooks: WebhookService;
  jobs: Pick<JobService, 'eraseWords'>;
}

/** The format name of the export document (and its version). */
export const EXPORT_FORMAT = 'cashtrack.member-data.v1';

/** Text chunks of about this size are handed to the writer. */
const CHUNK = 64 * 1024;

/** Exports one member's data and erases a member. */
export class MemberDataService {
  constructor(private readonly deps: MemberDataServiceDeps) {}

  /**
   * The export document of member `id` as text chunks (404 svc_member_not_found before the first).
   * Every list is read from its owner page by page and written out as it comes, so a member with
   * 100,000 ledger entries costs one page of memory, not the whole list. The lists are read one
   * after another, not in one snapshot: an export taken while the member is active may show an
   * order without the entry it was about to get.
   */
  async exportDocument(id: number, actor: string): Promise<AsyncIterable<string>> {
    const member = await this.deps.users.personalData(id);
    if (!member) throw new ServiceError('svc_member_not_found', `Member ${id} not found.`, 404, { member_id: id });
    this.deps.logger.info('members', 'Member data exported', { user_id: id, actor });
    return chunked(this.documentParts(member));
  }

  private async *documentParts(member: NonNullable<Awaited<ReturnType<UserService['personalData']>>>): AsyncGenerator<string> {
    const d = this.deps;
    const id = member.id;
    yield `{"format":${JSON.stringify(EXPORT_FORMAT)},"generated_at":${JSON.stringify(d.clock.now().toISOString())},"member":${JSON.stringify(member)}`;
    yield `,"balances":${JSON.stringify(await d.ledger.balancesOfMember(id))}`;
    yield* list('ledger_entries', d.ledger.entriesOfMember(id));
    yield* list('orders', d.orders.ofMember(id));
    yield* list('payouts', d.payouts.ofMember(id));
    yield* list('referrals', d.referrals.ofMember(id));
    yield* list('clicks', d.clicks.ofMember(id));
    yield* list('claims', d.claims.ofMember(id));
    yield `,"sessions":${JSON.stringify(await d.sessions.listOf(id))}`;
    yield `,"application_passwords":${JSON.stringify(await d.appPasswords.listOf(id))}`;
    yield '}\n';
  }

  /**
   * Erases member `id`: login and e-mail replaced by `erased-<id>` / `erased-<id>@invalid`, the
   * display name by the same placeholder, the password, sessions and application passwords gone,
   * the account disabled; payout details, click addresses, claim notes and receipts wiped; the
   * person's login, e-mail and name replaced wherever free text held them (entry, order, payout
   * and claim notes, orders' raw records, the log, stored request answers, webhook bodies, jobs).
   * Every amount and row stays. Refused (409) with svc_member_has_balance or
   * svc_member_payout_in_flight unless `force` with a note: the pending payouts are then cancelled
   * and the positive balance written off by an entry that says so. Administrators are refused
   * (409 svc_member_is_administrator): demote first. A second erase answers the first's result and
   * writes nothing. One transaction; `member.erased` is emitted in it.
   */
  async erase(id: number, input: EraseInput, actor: string): Promise<ErasureResult> {
    const d = this.deps;
    const force = input.force === true;
    const note = typeof input.note === 'string' ? input.note.trim() : '';
    try {
      if (force && !note) throw new ServiceError('svc_note_required', 'A forced erasure needs a note saying who asked for it and why.', 400, { field: 'note' });
      // Lines still buffered reach the table before it is searched.
      await d.logger.flush();
      const outcome = await d.db.transaction(async (t) => {
        const { user, erasedAt } = await d.users.lockForErasure(id, t);
        if (erasedAt !== null) return { repeated: true, result: await this.resultOf(user, erasedAt, t) };
        if (user.role === 'administrator')
          throw new ServiceError('svc_member_is_administrator', `User ${id} is an administrator: make them a member first.`, 409, { member_id: id });
        const pending = await d.payouts.pendingOf(id, t);
        if (pending.length > 0 && !force)
          throw new ServiceError(
            'svc_member_payout_in_flight',
            `Member ${id} has ${pending.length} pending payout(s): pay or cancel them first, or force the erasure with a note.`,
            409,
            { member_id: id, payout_ids: pending },
          );
        for (const payoutId of pending) await d.payouts.cancelWithin(payoutId, `${ERASURE_REASON}: ${note}`, actor, t);
        const positive = await d.ledger.positiveBalances(id, t);
        if (positive.length > 0 && !force)
          throw new ServiceError(
            'svc_member_has_balance',
            `Member ${id} still has a positive balance: pay it out first, or force the erasure with a note to write it off.`,
            409,
            { member_id: id, balances: positive.map((b) => b.currency) },
          );
        const writtenOff = await d.ledger.writeOffAtErasure(id, note, actor, t);
        const words = replacementsFor(user);
        const changed = await this.eraseEverywhere(id, words, t);
        await d.users.erase(id, t);
        const after = await d.users.lockForErasure(id, t);
        const result: ErasureResult = {
          member: after.user,
          erased_at: after.erasedAt ?? d.clock.now().toISOString(),
          written_off: writtenOff,
          payouts_cancelled: pending,
        };
        await d.events.emit(
          t,
          HOOKS.memberErased,
          { member_id: id, erased_at: result.erased_at, forced: force, written_off: writtenOff.map((e) => e.id), payouts_cancelled: pending },
          { actor },
        );
        return { repeated: false, result, changed };
      });
      if (!outcome.repeated)
        d.logger.info('members', 'Member erased', {
          user_id: id,
          forced: force,
          written_off: outcome.result.written_off.map((e) => ({ entry_id: e.id, amount: e.amount, currency: e.currency })),
          payouts_cancelled: outcome.result.payouts_cancelled,
          rows_changed: outcome.changed,
          actor,
        });
      return outcome.result;
    } catch (err) {
      if (err instanceof ServiceError) d.logger.warning('members', 'Member not erased', { user_id: id, code: err.code, actor });
      throw err;
    }
  }

  /** Each owner wipes its part, in `t`; answers how many rows changed per table. */
  private async eraseEverywhere(id: number, words: Replacement[], t: Transaction): Promise<Record<string, number>> {
    const d = this.deps;
    return {
      sessions: await d.sessions.eraseMember(id, t),
      app_passwords: await d.appPasswords.eraseMember(id, t),
      ledger_entries: await d.ledger.eraseMember(id, words, t),
      payouts: await d.payouts.eraseMember(id, words, t),
      payout_batches: await d.payoutBatches.eraseWords(words, t),
      orders: await d.orders.eraseMember(id, words, t),
      clicks: await d.clicks.eraseMember(id, t),
      claims: await d.claims.eraseMember(id, words, t),
      logs: await d.logger.eraseWords(words, t),
      idempotency_keys: await d.idempotency.eraseWords(words, t),
      webhook_deliveries: await d.webhooks.eraseWords(words, t),
      jobs: await d.jobs.eraseWords(words, t),
    };
  }

  /** The result of an erasure made before: read back, nothing written. */
  private async resultOf(user: User, erasedAt: string, t: Transaction): Promise<ErasureResult> {
    return {
      member: user,
      erased_at: erasedAt,
      written_off: await this.deps.ledger.writeOffsOf(user.id, t),
      payouts_cancelled: await this.deps.payouts.cancelledAtErasure(user.id, t),
    };
  }
}

/**
 * The words that name the person: login, e-mail and display name, each replaced by the
 * placeholder. A display name shorter than 3 characters is left alone (it would match inside
 * unrelated words); it is replaced on the account itself all the same.
 */
export function replacementsFor(user: User): Replacement[] {
  const placeholder = erasedLogin(user.id);
  const words: Replacement[] = [
    { find: user.email, replace: `${placeholder}@invalid` },
    { find: user.login, replace: placeholder },
  ];
  if (user.display_name.trim().length >= 3 && user.display_name !== user.login) words.push({ find: user.display_name.trim(), replace: placeholder });
  return words;
}

/** `"name":[item,item,...]`, written item by item. */
async function* list(name: string, items: AsyncIterable<unknown>): AsyncGenerator<string> {
  yield `,${JSON.stringify(name)}:[`;
  let first = true;
  for await (const item of items) {
    yield `${first ? '' : ','}${JSON.stringify(item)}`;
    first = false;
  }
  yield ']';
}

/** The parts joined into chunks of about `CHUNK` characters (fewer, larger writes). */
async function* chunked(parts: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '';
  for await (const part of parts) {
    buffer += part;
    if (buffer.length >= CHUNK) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}
