import { foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * The payouts a batch was made of, kept for good (a cancelled batch still lists what it held);
 * `override_note` when a held payout was released into it by an administrator.
 */
export const createPayoutBatchItems: Migration = {
  name: '20261127141002-create-payout-batch-items',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'payout_batch_items',
      {
        id: primaryKey(dialect),
        batch_id: { ...foreignKey(dialect), references: { model: 'payout_batches', key: 'id' }, onDelete: 'RESTRICT' },
        payout_id: { ...foreignKey(dialect), references: { model: 'payouts', key: 'id' }, onDelete: 'RESTRICT' },
        override_note: { type: types.STRING(500), allowNull: true },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('payout_batch_items', ['batch_id', 'payout_id'], { unique: true, name: 'payout_batch_items_batch' });
    await qi.addIndex('payout_batch_items', ['payout_id'], { name: 'payout_batch_items_payout' });
  },
  async down({ qi }) {
    await qi.dropTable('payout_batch_items');
  },
};
