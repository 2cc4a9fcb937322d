// An administrator's changes to one order: its status, amounts or note, a member for an unmatched
// order, the decision on a held one. Each runs in the frame they share (`changeOne`); what they do
// to the order follows the same rules as a network's report (changes.ts).
import { HOOKS } from '../../hooks/index.js';
import type { Transaction } from '../../db/transaction.js';
import { ServiceError } from '../../errors.js';
import { currencyExponent, parseAmount } from '../../money.js';
import type { Once } from '../idempotency/index.js';
import { withNote, type OrderEffects } from './effects.js';
import { checkStatus, invalid, optionalText, type Amounts } from './reports.js';
import { decideHeld } from './review.js';
import type { OrderChanges } from './changes.js';
import type { OrderReader, OrderRow } from './store.js';
import type { Applied, OrderChange, OrderServiceDeps, UpdateInput } from './types.js';

/** Makes an administrator's changes to orders (see `OrderService.update`, `assign`, `release`, `declineHeld`). */
export class OrderAdmin {
  constructor(
    private readonly deps: Pick<OrderServiceDeps, 'db' | 'clock' | 'logger' | 'users' | 'clicks'>,
    private readonly reader: OrderReader,
    private readonly effects: OrderEffects,
    private readonly changes: OrderChanges,
  ) {}

  async update(id: number, input: UpdateInput, actor: string, once?: Once<OrderChange>): Promise<OrderChange> {
    const refused = (code: string) =>
      this.deps.logger.warning('orders', 'Order change refused', {
        code,
        order_id: id,
        status: input?.status === undefined ? undefined : String(input.status).slice(0, 16),
        actor,
      });
    return this.changeOne(
      id,
      once,
      refused,
      () => ({ status: input.status === undefined ? undefined : checkStatus(input.status), note: optionalText(input.note, 'note', 500) }),
      async (row, { status, note }, t) => {
        let amounts: Amounts | undefined;
        if (input.sale_amount !== undefined || input.commission !== undefined || input.currency !== undefined) {
          const currency = input.currency ?? row.currency;
          currencyExponent(currency);
          if (currency !== row.currency && (input.sale_amount === undefined || input.commission === undefined)) {
            throw invalid('currency', 'A change of currency needs both sale_amount and commission in the new currency.');
          }
          amounts = {
            currency,
            sale: input.sale_amount === undefined ? row.sale_amount : parseAmount(input.sale_amount, currency, { allowZero: true, field: 'sale_amount' }),
            commission: input.commission === undefined ? row.commission : parseAmount(input.commission, currency, { field: 'commission' }),
          };
        }
        const applied = await this.changes.apply(row, { amounts, status }, 'strict', actor, note, t);
        if (note !== null && note !== row.note) {
          await this.deps.db.execute('UPDATE orders SET note = ?, updated_at = ? WHERE id = ?', [note, this.deps.clock.now(), id], t);
          applied.changes.push('note');
        }
        if (applied.changes.length === 0) applied.events.push({ level: 'debug', message: 'Order unchanged', context: { order_id: id, actor } });
        return applied;
      },
    );
  }

  async assign(
    id: number,
    member: number | null,
    actor: string,
    once?: Once<OrderChange>,
    note?: string | null,
    clickId: string | null = null,
  ): Promise<OrderChange> {
    const refused = (code: string) =>
      this.deps.logger.warning('orders', 'Order assignment refused', { code, order_id: id, member_id: member, click_id: clickId?.slice(0, 40), actor });
    return this.changeOne(
      id,
      once,
      refused,
      () => {
        if (member === null && clickId === null) throw invalid('member_id', 'member_id or click_id is required.');
        return optionalText(note, 'note', 500);
      },
      async (row, text, t) => {
        const click = clickId === null ? null : ((await this.deps.clicks.byIds([clickId], t)).get(clickId) ?? null);
        if (clickId !== null && !click) throw new ServiceError('svc_click_not_found', `Click ${clickId.slice(0, 40)} not found.`, 404);
        const memberId = member ?? click!.member_id;
        if (click && click.member_id !== memberId)
          throw new ServiceError('svc_click_mismatch', `Click ${click.id} is member ${click.member_id}'s, not member ${memberId}'s.`, 409, {
            click_member_id: click.member_id,
          });
        if (click && (click.network !== row.network || click.advertiser !== row.advertiser))
          throw new ServiceError('svc_click_mismatch', `Click ${click.id} was on ${click.network}/${click.advertiser}, not on this order's shop.`, 409, {
            network: click.network,
            advertiser: click.advertiser,
          });
        await this.deps.users.requireMemberId(memberId, t);
        let applied: Applied = { row, changes: [], ignored: [], events: [] };
        if (row.member_id === memberId) {
          applied.events.push({ level: 'debug', message: 'Order already assigned to this member', context: { order_id: id, member_id: memberId, actor } });
        } else if (row.member_id !== null) {
          throw new ServiceError('svc_order_already_assigned', `Order ${id} already belongs to member ${row.member_id}.`, 409, { member_id: row.member_id });
        } else {
          const now = this.deps.clock.now();
          const clickOf = click ? click.id : row.click_id;
          await this.deps.db.execute('UPDATE orders SET member_id = ?, click_id = ?, updated_at = ? WHERE id = ?', [memberId, clickOf, now, id], t);
          const assigned = { ...row, member_id: memberId, click_id: clickOf, updated_at: now };
          const context = { order_id: id, member_id: memberId, status: row.status, actor, ...(click ? { click_id: click.id } : {}) };
          await this.effects.enter(assigned, actor, text ?? 'assigned by an administrator', t, context);
          applied = {
            row: assigned,
            changes: ['member'],
            ignored: [],
            events: [{ level: 'info', message: 'Order assigned', hook: HOOKS.orderAssigned, context }],
          };
        }
        return applied;
      },
    );
  }

  async decide(id: number, decision: 'released' | 'declined', actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    const refused = (code: string) =>
      this.deps.logger.warning('orders', decision === 'released' ? 'Release of an order refused' : 'Decline of a held order refused', {
        code,
        order_id: id,
        actor,
      });
    return this.changeOne(
      id,
      once,
      refused,
      () => optionalText(note, 'note', 500),
      async (row, text, t) => {
        if (row.review !== 'held') {
          throw new ServiceError('svc_order_not_held', `Order ${id} is not held for review${row.review ? ` (it was ${row.review} already)` : ''}.`, 409, {
            review: row.review,
          });
        }
        const { set, row: decided, changes, events } = decideHeld(row, decision, actor, text, this.deps.clock.now());
        // Released, it is no longer held: the effects of its current status apply now, once.
        if (decision === 'released') await this.effects.enter(decided, actor, withNote('released after review', text), t, events[0].context);
        const columns = Object.keys(set);
        await this.deps.db.execute(`UPDATE orders SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), id], t);
        return { row: decided, changes, ignored: [], events };
      },
    );
  }

  /**
   * One administrator's change to one order, the frame every such change shares: its input read
   * (`prepare`), the Idempotency-Key claimed, the order locked (404 svc_order_not_found), the
   * change made, its ledger effects settled, the answer recorded with the key in the same
   * transaction, hooks after commit. A refusal is logged by `refused`.
   */
  private async changeOne<P>(
    id: number,
    once: Once<OrderChange> | undefined,
    refused: (code: string) => void,
    prepare: () => P,
    change: (row: OrderRow, prepared: P, t: Transaction) => Promise<Applied>,
  ): Promise<OrderChange> {
    try {
      const prepared = prepare();
      const { result, events } = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        const row = await this.reader.lockById(id, t);
        if (!row) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
        const applied = await change(row, prepared, t);
        await this.effects.settle(t);
        const [result] = await this.changes.results([applied], t);
        await once?.record(result, t);
        await this.changes.announce(applied.events, t);
        return { result, events: applied.events };
      });
      this.changes.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError) refused(err.code);
      throw err;
    }
  }
}
