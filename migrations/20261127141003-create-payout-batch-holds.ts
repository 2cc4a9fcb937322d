import { foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Payouts held out of a batch when it was made (a shared destination, a bad IBAN) and why. */
export const createPayoutBatchHolds: Migration = {
  name: '20261127141003-create-payout-batch-holds',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'payout_batch_holds',
      {
        id: primaryKey(dialect),
        batch_id: { ...foreignKey(dialect), references: { model: 'payout_batches', key: 'id' }, onDelete: 'RESTRICT' },
        payout_id: { ...foreignKey(dialect), references: { model: 'payouts', key: 'id' }, onDelete: 'RESTRICT' },
        code: { type: types.STRING(64), allowNull: false },
        reason: { type: types.STRING(1000), allowNull: false },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('payout_batch_holds', ['batch_id', 'payout_id'], { unique: true, name: 'payout_batch_holds_batch' });
  },
  async down({ qi }) {
    await qi.dropTable('payout_batch_holds');
  },
};
