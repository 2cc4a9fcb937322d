import { binaryString, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** The member's share: per network (advertiser '') and per advertiser override. */
export const createCashbackRules: Migration = {
  name: '20261122000011-create-cashback-rules',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'cashback_rules',
      {
        id: primaryKey(dialect),
        network: binaryString(dialect, 64),
        advertiser: binaryString(dialect, 128),
        type: { type: types.STRING(24), allowNull: false },
        value: { type: types.STRING(32), allowNull: false },
        currency: { type: types.CHAR(3), allowNull: true },
        updated_at: timestamp(),
      },
      tableOptions(dialect),
    );
    await qi.addIndex('cashback_rules', ['network', 'advertiser'], { unique: true, name: 'cashback_rules_scope' });
  },
  async down({ qi }) {
    await qi.dropTable('cashback_rules');
  },
};
