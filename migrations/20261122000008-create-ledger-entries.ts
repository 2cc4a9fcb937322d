import { binaryString, foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Append-only entries; a reversal points at the entry it cancels (at most one, by the unique key). */
export const createLedgerEntries: Migration = {
  name: '20261122000008-create-ledger-entries',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'ledger_entries',
      {
        id: primaryKey(dialect),
        member_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        currency: { type: types.CHAR(3), allowNull: false },
        type: { type: types.STRING(16), allowNull: false },
        amount: { type: types.BIGINT, allowNull: false },
        balance_after: { type: types.BIGINT, allowNull: false },
        source_type: { type: types.STRING(16), allowNull: false },
        source_id: binaryString(dialect, 64, true),
        order_id: foreignKey(dialect, true),
        reverses_id: foreignKey(dialect, true),
        note: { type: types.STRING(500), allowNull: true },
        actor: { type: types.STRING(64), allowNull: false },
        created_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('ledger_entries', ['member_id', 'id'], { name: 'ledger_entries_member' });
    await qi.addIndex('ledger_entries', ['member_id', 'type', 'id'], { name: 'ledger_entries_member_type' });
    await qi.addIndex('ledger_entries', ['reverses_id'], { unique: true, name: 'ledger_entries_reverses' });
    await qi.addIndex('ledger_entries', ['order_id'], { name: 'ledger_entries_order' });
    await qi.addIndex('ledger_entries', ['source_type', 'source_id'], { name: 'ledger_entries_source' });
  },
  async down({ qi }) {
    await qi.dropTable('ledger_entries');
  },
};
