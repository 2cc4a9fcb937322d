import type { Migration } from '../src/db/migration.js';

/**
 * Lookups from a ledger entry to its payout (ledger verify, entry details), and the running total
 * of balance rows (an unfiltered member list must not count 100,000 rows per page).
 */
export const indexPayoutEntries: Migration = {
  name: '20261124000020-index-payout-entries',
  async up({ qi, sequelize }) {
    await qi.addIndex('payouts', ['entry_id'], { name: 'payouts_entry' });
    await qi.addIndex('payouts', ['return_entry_id'], { name: 'payouts_return_entry' });
    await sequelize.query("INSERT INTO counters (name, value) SELECT 'balances', COUNT(*) FROM balances");
  },
  async down({ qi, sequelize }) {
    await qi.removeIndex('payouts', 'payouts_entry');
    await qi.removeIndex('payouts', 'payouts_return_entry');
    await sequelize.query("DELETE FROM counters WHERE name = 'balances'");
  },
};
