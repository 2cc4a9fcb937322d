import { binaryString, type Migration } from '../src/db/migration.js';

/**
 * The click an order came from (its sub-id was a click id, or an administrator assigned it with
 * the click as evidence). No foreign key: clicks are pruned after `clicks.retention_days`, the
 * order keeps the id.
 */
export const addOrdersClickId: Migration = {
  name: '20261127100001-add-orders-click-id',
  async up({ qi, dialect }) {
    await qi.addColumn('orders', 'click_id', binaryString(dialect, 24, true));
  },
  async down({ qi }) {
    await qi.removeColumn('orders', 'click_id');
  },
};
