import { foreignKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** One row per member and currency, updated in the same transaction as each ledger entry. */
export const createBalances: Migration = {
  name: '20261122000007-create-balances',
  async up({ qi, dialect, types }) {
    const money = { type: types.BIGINT, allowNull: false, defaultValue: 0 };
    await qi.createTable(
      'balances',
      {
        member_id: { ...foreignKey(dialect), primaryKey: true, references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        currency: { type: types.CHAR(3), allowNull: false, primaryKey: true },
        available: money,
        pending: money,
        lifetime_earned: money,
        lifetime_paid: money,
        last_entry_at: timestamp(true),
      },
      tableOptions(dialect),
    );
    // Each list order, with the tie-breakers, so a page of the largest balances reads an index.
    await qi.addIndex('balances', ['available', 'member_id', 'currency'], { name: 'balances_available' });
    await qi.addIndex('balances', ['pending', 'member_id', 'currency'], { name: 'balances_pending' });
    await qi.addIndex('balances', ['last_entry_at', 'member_id', 'currency'], { name: 'balances_last_entry' });
    await qi.addIndex('balances', ['currency', 'available'], { name: 'balances_currency_available' });
  },
  async down({ qi }) {
    await qi.dropTable('balances');
  },
};
