import { foreignKey, primaryKey, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/** Who referred whom; ended_at set when removed (past credits stay). One live referral per referee. */
export const createReferrals: Migration = {
  name: '20261122000013-create-referrals',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'referrals',
      {
        id: primaryKey(dialect),
        referrer_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        referee_id: { ...foreignKey(dialect), references: { model: 'users', key: 'id' }, onDelete: 'RESTRICT' },
        created_at: timestamp(),
        ended_at: timestamp(true),
        actor: { type: types.STRING(64), allowNull: false },
      },
      tableOptions(dialect),
    );
    await qi.addIndex('referrals', ['referee_id', 'ended_at'], { name: 'referrals_referee' });
    await qi.addIndex('referrals', ['referrer_id', 'id'], { name: 'referrals_referrer' });
  },
  async down({ qi }) {
    await qi.dropTable('referrals');
  },
};
