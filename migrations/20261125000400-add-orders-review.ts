import { timestamp, type Migration } from '../src/db/migration.js';

/**
 * The review of an order a network reported with amounts past its ceiling (or a commission above
 * the sale): `review` is null (never held), `held` (recorded, no ledger effect), `released` or
 * `declined` by an administrator; `review_reason` says why it was held. The index serves the
 * list of held orders (GET /orders?review=held). Same columns on both dialects.
 */
export const addOrdersReview: Migration = {
  name: '20261125000400-add-orders-review',
  async up({ qi, types }) {
    await qi.addColumn('orders', 'review', { type: types.STRING(16), allowNull: true });
    await qi.addColumn('orders', 'review_reason', { type: types.STRING(32), allowNull: true });
    await qi.addColumn('orders', 'reviewed_by', { type: types.STRING(64), allowNull: true });
    await qi.addColumn('orders', 'reviewed_at', timestamp(true));
    await qi.addIndex('orders', ['review', 'id'], { name: 'orders_review' });
  },
  async down({ qi }) {
    await qi.removeIndex('orders', 'orders_review');
    await qi.removeColumn('orders', 'reviewed_at');
    await qi.removeColumn('orders', 'reviewed_by');
    await qi.removeColumn('orders', 'review_reason');
    await qi.removeColumn('orders', 'review');
  },
};
