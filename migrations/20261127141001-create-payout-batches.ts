import { primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Payout batches: pending payouts of one method and currency sent together, through a file finance
 * downloads (CSV, SEPA) or a provider's API (PayPal). Written by services/payouts/batches.ts.
 */
export const createPayoutBatches: Migration = {
  name: '20261127141001-create-payout-batches',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'payout_batches',
      {
        id: primaryKey(dialect),
        method: { type: types.STRING(64), allowNull: false },
        currency: { type: types.CHAR(3), allowNull: false },
        channel: { type: types.STRING(16), allowNull: false },
        status: { type: types.STRING(16), allowNull: false },
        item_count: { type: types.INTEGER, allowNull: false },
        held_count: { type: types.INTEGER, allowNull: false },
        total: { type: types.BIGINT, allowNull: false },
        note: { type: types.STRING(500), allowNull: true },
        file_name: { type: types.STRING(191), allowNull: true },
        provider_batch_id: { type: types.STRING(191), allowNull: true },
        provider_status: { type: types.STRING(32), allowNull: true },
        actor: { type: types.STRING(64), allowNull: false },
        closed_by: { type: types.STRING(64), allowNull: true },
        created_at: timestamp(),
        updated_at: timestamp(),
        sent_at: timestamp(true),
        finished_at: timestamp(true),
        cancelled_at: timestamp(true),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('payout_batches', ['status', 'id'], { name: 'payout_batches_status' });
  },
  async down({ qi }) {
    await qi.dropTable('payout_batches');
  },
};
