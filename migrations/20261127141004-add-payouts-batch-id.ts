import { foreignKey, type Migration } from '../src/db/migration.js';

/**
 * The live batch a payout is in (null when none). One column, set only by a guarded UPDATE
 * (`... AND batch_id IS NULL`), so a payout is in at most one live batch whatever races; a
 * cancelled batch sets it back to null.
 */
export const addPayoutsBatchId: Migration = {
  name: '20261127141004-add-payouts-batch-id',
  async up({ qi, dialect }) {
    await qi.addColumn('payouts', 'batch_id', foreignKey(dialect, true));
    await qi.addIndex('payouts', ['batch_id'], { name: 'payouts_batch' });
  },
  async down({ qi }) {
    await qi.removeIndex('payouts', 'payouts_batch');
    await qi.removeColumn('payouts', 'batch_id');
  },
};
