import { binaryString, tableOptions, timestamp, type Migration } from '../src/db/migration.js';

/**
 * Where each network's coupon refreshes stand: the number of the last full refresh (a coupon's
 * `last_seen_refresh` is compared with it) and, for networks that list changes since a date
 * (Awin's `updatedSince`), the date the next incremental refresh asks from.
 */
export const createCouponRefreshes: Migration = {
  name: '20261126000301-create-coupon-refreshes',
  async up({ qi, dialect, types }) {
    await qi.createTable(
      'coupon_refreshes',
      {
        network: { ...binaryString(dialect, 64), primaryKey: true },
        refresh: { type: types.INTEGER, allowNull: false, defaultValue: 0 },
        updated_since: timestamp(true),
        full_at: timestamp(true),
        finished_at: timestamp(true),
      },
      tableOptions(dialect),
    );
  },
  async down({ qi }) {
    await qi.dropTable('coupon_refreshes');
  },
};
