import type { Migration } from '../src/db/migration.js';

/** GET /orders?search= matches a transaction id prefix across networks. */
export const addOrdersTransactionIdIndex: Migration = {
  name: '20261123000011-add-orders-transaction-id-index',
  async up({ qi }) {
    await qi.addIndex('orders', ['transaction_id'], { name: 'orders_transaction_id' });
  },
  async down({ qi }) {
    await qi.removeIndex('orders', 'orders_transaction_id');
  },
};
