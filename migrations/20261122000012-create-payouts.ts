import { foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Members' withdrawals: the debit is posted when the payout is created. */
export const createPayouts: Migration = {
  name: '20261122000012-create-payouts',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'payouts',
      {
        id: primaryKey(dialect),
        member_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        amount: { type: types.BIGINT, allowNull: false },
        currency: { type: types.CHAR(3), allowNull: false },
        method: { type: types.STRING(64), allowNull: false },
        details: { type: types.TEXT, allowNull: true },
        note: { type: types.STRING(500), allowNull: true },
        status: { type: types.STRING(16), allowNull: false },
        reference: { type: types.STRING(191), allowNull: true },
        reason: { type: types.STRING(500), allowNull: true },
        entry_id: foreignKey(dialect, true),
        return_entry_id: foreignKey(dialect, true),
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('payouts', ['status', 'id'], { name: 'payouts_status' });
    await qi.addIndex('payouts', ['member_id', 'id'], { name: 'payouts_member' });
  },
  async down({ qi }) {
    await qi.dropTable('payouts');
  },
};
