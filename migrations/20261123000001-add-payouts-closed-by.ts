import type { Migration } from '../src/db/migration.js';

/** Who marked a payout paid or cancelled it (the creator is `actor`), for the audit trail. */
export const addPayoutsClosedBy: Migration = {
  name: '20261123000001-add-payouts-closed-by',
  async up({ qi, types }) {
    await qi.addColumn('payouts', 'closed_by', { type: types.STRING(64), allowNull: true });
  },
  async down({ qi }) {
    await qi.removeColumn('payouts', 'closed_by');
  },
};
