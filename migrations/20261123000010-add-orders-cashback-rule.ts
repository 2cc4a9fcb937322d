import type { Migration } from '../src/db/migration.js';

/**
 * The cashback rule an order's cashback was computed with ("type:value", or "flat:value:CUR"), kept
 * on the order so a correction while pending recomputes with the same rule after the rule changed.
 */
export const addOrdersCashbackRule: Migration = {
  name: '20261123000010-add-orders-cashback-rule',
  async up({ qi, types }) {
    await qi.addColumn('orders', 'cashback_rule', { type: types.STRING(64), allowNull: true });
  },
  async down({ qi }) {
    await qi.removeColumn('orders', 'cashback_rule');
  },
};
